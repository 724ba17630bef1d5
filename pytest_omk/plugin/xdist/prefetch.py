"""Prefetching model calls under pytest-xdist.

In one process the plugin starts every selected sample's calls before pytest's run loop. An
xdist worker cannot do that: it collects every item but runs only those the controller sends it,
so calling them all would multiply the calls by the number of workers. Instead:

- :class:`WorkerFeed` (in each worker) sees the item indices the controller sends, as they arrive,
  and lets the worker start exactly those items' calls; an item whose call has started is never
  handed to another worker (``--dist worksteal``), so no call is made twice.
- :func:`make_scheduler` (in the controller, ``--dist load``, xdist's default) keeps each worker's
  queue at least as deep as its share of ``--omk-concurrency``, so there is always enough queued
  work to keep that many calls in flight.

``docs/performance.md`` explains the design. This module touches two xdist internals (the worker's
``WorkerInteractor.handle_command``/``steal`` and ``LoadScheduling``), duck-typed, so that it is
inert when they are missing or change shape: then calls simply start one item at a time, as
before.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pytest

from pytest_omk.run.prefetch import worker_share

T = TypeVar("T")


class WorkerFeed:
    """The indices of the items sent to this xdist worker, observed as they arrive.

    Commands arrive on execnet's receiver thread; :meth:`take` hands the new indices to the main
    thread, which starts their calls. :meth:`wait` blocks on one result while still starting the
    calls of items that arrive meanwhile.
    """

    def __init__(self, interactor: Any) -> None:
        self._lock = threading.Lock()
        self._new: list[int] = []
        self._started: set[int] = set()
        self._arrived: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._handle = interactor.handle_command
        self._steal = interactor.steal
        self._send = interactor.sendevent
        # Instance attributes shadow the methods: xdist looks ``self.handle_command`` up when it
        # installs its channel callback, which happens after this (inside its run loop).
        interactor.handle_command = self._handle_command
        interactor.steal = self._guarded_steal

    @classmethod
    def attach(cls, plugins: Iterable[object]) -> WorkerFeed | None:
        """A feed on xdist's worker interactor among ``plugins``, or ``None`` (not a worker)."""
        for plugin in plugins:
            if type(plugin).__name__ == "WorkerInteractor" and all(
                callable(getattr(plugin, name, None)) for name in ("handle_command", "steal", "sendevent")
            ):
                return cls(plugin)
        return None

    def _handle_command(self, command: Any) -> None:
        self._handle(command)
        indices = _indices_of(command)
        if indices:
            with self._lock:
                self._new.extend(indices)
                if not self._arrived.done():
                    self._arrived.set_result(None)

    def _guarded_steal(self, indices: list[int]) -> None:
        with self._lock:
            if self._started.intersection(indices):
                # Another worker would call this item again: refuse, as xdist refuses items that
                # already ran (it then leaves them here).
                self._send("unscheduled", indices=[])
                return
            wanted = set(indices)
            self._new = [i for i in self._new if i not in wanted]
        self._steal(indices)

    def take(self) -> list[int]:
        """The indices that arrived since the last call, now marked as started."""
        with self._lock:
            new, self._new = self._new, []
            self._started.update(new)
            if self._arrived.done():
                self._arrived = concurrent.futures.Future()
            return new

    def wait(self, future: concurrent.futures.Future[T], start_new: Callable[[list[int]], None]) -> T:
        """``future.result()``, calling ``start_new`` with every batch of indices arriving meanwhile."""
        while not future.done():
            with self._lock:
                arrived = self._arrived
            waited: list[concurrent.futures.Future[Any]] = [future, arrived]
            concurrent.futures.wait(waited, return_when=concurrent.futures.FIRST_COMPLETED)
            new = self.take()
            if new:
                start_new(new)
        return future.result()


def _indices_of(command: Any) -> list[int]:
    """The item indices a controller command queues (``runtests``); none for anything else."""
    if isinstance(command, tuple) and len(command) == 2 and command[0] == "runtests":
        indices = command[1].get("indices", ())
        return [i for i in indices if isinstance(i, int)]
    return []


def make_scheduler(config: Any, log: Any, concurrency: int) -> Any:
    """Xdist's load scheduler keeping every worker's queue ``concurrency / workers`` deep, or
    ``None`` to leave the choice to xdist (another ``--dist`` mode, or an xdist without it)."""
    if config.getvalue("dist") != "load":
        return None
    try:
        from xdist.scheduler import LoadScheduling  # type: ignore[import-untyped]
    except ImportError:
        return None

    class PrefetchLoadScheduling(LoadScheduling):  # type: ignore[misc]
        """``LoadScheduling`` that tops each worker's queue up to its share of the concurrency."""

        def schedule(self) -> None:
            first = self.collection is None
            super().schedule()
            if first and self.collection:
                for node in self.nodes:
                    self._top_up(node)
                if not self.pending:
                    for node in self.nodes:
                        if not node.shutting_down:
                            node.shutdown()

        def check_schedule(self, node: Any, duration: float = 0) -> None:
            super().check_schedule(node, duration=duration)
            self._top_up(node)

        def _top_up(self, node: Any) -> None:
            if node.shutting_down or not self.pending or node not in self.node2pending:
                return
            depth = worker_share(concurrency, len(self.node2pending))
            missing = depth - len(self.node2pending[node])
            if missing > 0:
                self._send_tests(node, missing)

    return PrefetchLoadScheduling(config, log)


class DeepQueues:
    """The controller's plugin choosing that scheduler (workers can only prefetch what they were sent)."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: Any, log: Any) -> Any:
        """Keep the workers' queues deep enough to start their share of the calls ahead."""
        return make_scheduler(config, log, self.concurrency)
