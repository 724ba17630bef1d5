"""pytest-timeout's limit applied to a whole sample, ended with one line (docs/works-with.md).

pytest-timeout arms a timer for each item (``--timeout``, the ``timeout`` ini key, the
``PYTEST_TIMEOUT`` variable, the ``timeout`` marker) and, when it fires, dumps every thread's stack
and fails the item (``signal`` method) or ends the process (``thread``). A sample's time is mostly
its model calls, which pytest-omk starts ahead of the item and waits for in the item's setup: left
alone, the timer bounds only that wait and fires in the middle of it, printing the call loop's
frames. :class:`SampleTimeouts` takes the wait over:

- pytest-timeout hands it each item's settings through its own ``pytest_timeout_set_timer`` hook,
  so which limit applies (marker, option, ini key, variable) is decided by pytest-timeout itself;
- the sample's clock starts when its first call was sent, or when pytest began the item if that
  was earlier (no item holds pytest longer than the limit);
- while the item waits for its calls, pytest-timeout's timer is paused and this object's deadline
  ends the wait: the calls still running are cut (cancelled, a call already sent counted as
  failed), and the item ERRORs with one line, a setup failure as pytest-timeout's own would be;
- after the wait, pytest-timeout's timer is set again, through the same hook, for what is left of
  the limit (grading and teardown stay under pytest-timeout's own watch);
- a rerun (pytest-rerunfailures) asks the model again and gets the whole limit again.

Without pytest-timeout, or without a limit for the item, nothing here runs.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import pytest

from pytest_omk.models.accounting import CallLog
from pytest_omk.plugin.item_records import note
from pytest_omk.plugin.nodes import SampleItem

if TYPE_CHECKING:
    from pytest_omk.models.run import SampleRun
    from pytest_omk.run.launcher import Launcher

RunsFuture = concurrent.futures.Future[list["SampleRun"]]
T = TypeVar("T")
PLUGIN_NAME = "omk-sample-timeouts"
CUT_WAIT = 30.0
"""At most this long for cut calls to end (their cancellation reaches them at once; a safety net)."""


@dataclass
class Clock:
    """One item's limit under pytest-timeout."""

    limit: float
    settings: Any
    """pytest-timeout's settings for the item, handed back with the time left when its timer is set again."""
    began: float
    """When pytest-timeout set the item's timer, or a rerun's setup began (``time.monotonic``)."""
    deadline: float = 0.0
    paused: bool = False
    attempts: int = 0


def sample_deadline(began: float, limit: float, sent: float | None) -> float:
    """When a sample's time runs out: ``limit`` seconds after its first call was sent (``sent``),
    or after pytest began its item (``began``) if that was earlier or nothing was sent yet."""
    return (began if sent is None else min(sent, began)) + limit


def overran(deadline: float, sent: float | None, ended: float | None) -> float | None:
    """How long a sample's finished calls took, when they ended after its ``deadline``; else ``None``."""
    if sent is None or ended is None or ended <= deadline:
        return None
    return ended - sent


def timed_out_line(limit: float, log: CallLog | None, took: float | None = None) -> str:
    """The one line a sample whose time ran out ERRORs with (``took``: its calls ended, later)."""
    records = log.records if log is not None else ()
    cut = sum(1 for record in records if record.failed)
    head = f"omk: sample timed out after {limit:g} s (pytest-timeout)"
    if took is not None:
        return f"{head}; its calls took {took:.1f} s ({len(records)} answered)"
    if not records:
        return f"{head}; none of its calls was answered or sent yet (each waits for a call slot)"
    answered = len(records) - cut
    return f"{head}; {answered} of {len(records)} calls answered" + (f", {cut} cut off" if cut else "")


class SampleTimeouts:
    """``omk-sample-timeouts``: each sample's limit under pytest-timeout (see the module docstring)."""

    NAME = PLUGIN_NAME

    def __init__(self) -> None:
        self._clocks: dict[str, Clock] = {}
        self._lines: dict[str, str] = {}
        """The error line of an item whose time ran out, until its setup ends."""

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_timeout_set_timer(self, item: pytest.Item, settings: Any) -> None:
        """Note a sample's limit; pytest-timeout (or whoever implements the timer) still sets it."""
        if isinstance(item, SampleItem) and settings.timeout:
            self._clocks[item.nodeid] = Clock(float(settings.timeout), settings, time.monotonic())

    def bound(self, item: SampleItem, future: RunsFuture, launcher: Launcher) -> RunsFuture:
        """``future``, or one that ends with the item's timeout once its limit is reached."""
        clock = self._clocks.get(item.nodeid)
        if clock is None:
            return future
        log = launcher.logs.get(item.nodeid)
        sent = None if log is None else log.sent_at
        clock.deadline = sample_deadline(clock.began, clock.limit, sent)
        if future.done():  # answered before pytest got to it: in time, or it overran its limit
            slot = launcher.tasks.get(item.nodeid)
            took = overran(clock.deadline, sent, None if slot is None else slot.ended)
            return future if took is None else self._expired(item, timed_out_line(clock.limit, log, took))
        hook = item.config.hook
        hook.pytest_timeout_cancel_timer(item=item)  # paused: the deadline below ends the wait
        clock.paused = True
        deadline = Deadline(future, clock.deadline - time.monotonic())
        deadline.start(lambda: self._cut(item, launcher, clock.limit))
        return deadline.future

    def _cut(self, item: SampleItem, launcher: Launcher, limit: float) -> BaseException:
        """End the item's calls (off pytest's thread) and give the error its wait ends with."""
        launcher.cut(item.nodeid, wait=CUT_WAIT)
        return self._failure(item, timed_out_line(limit, launcher.logs.get(item.nodeid)))

    def _failure(self, item: SampleItem, line: str) -> BaseException:
        self._lines[item.nodeid] = line
        # A setup failure with the line alone: no traceback (pytest-timeout fails the item too).
        return pytest.fail.Exception(line, pytrace=False)

    def _expired(self, item: SampleItem, line: str) -> RunsFuture:
        expired: RunsFuture = concurrent.futures.Future()
        expired.set_exception(self._failure(item, line))
        return expired

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        """Around the setup (the wait among it): a rerun's whole limit again; after it, the
        record's error, or pytest-timeout's timer again."""
        self._restart(item)
        try:
            return (yield)
        finally:
            line = self._lines.pop(item.nodeid, None)
            if line is not None and isinstance(item, SampleItem):
                note(item, {"error": line})
            self._resume(item, timed_out=line is not None)

    def _restart(self, item: pytest.Item) -> None:
        """A rerun (pytest-rerunfailures) asks the model again: it gets the whole limit again,
        from now, and pytest-timeout's timer with it (it may have fired, or been left paused)."""
        clock = self._clocks.get(item.nodeid)
        if clock is None:
            return
        clock.attempts += 1
        if clock.attempts > 1:
            clock.began = time.monotonic()
            item.config.hook.pytest_timeout_cancel_timer(item=item)
            self._set_timer(item, clock, clock.limit)

    def _resume(self, item: pytest.Item, *, timed_out: bool) -> None:
        clock = self._clocks.get(item.nodeid)
        if clock is None or not clock.paused:
            return
        clock.paused = False
        # Timed out: the timer stays off, as pytest-timeout's own after it fired. Else what is
        # left of the limit counted from the item's start (the wait's deadline came no later, so
        # some is left unless the answers came just in time).
        left = clock.began + clock.limit - time.monotonic()
        if not timed_out and left > 0:
            self._set_timer(item, clock, left)

    def _set_timer(self, item: pytest.Item, clock: Clock, seconds: float) -> None:
        """pytest-timeout's timer (or whoever implements it) for ``seconds``, through its hook."""
        set_timer = item.config.pluginmanager.subset_hook_caller("pytest_timeout_set_timer", [self])
        set_timer(item=item, settings=clock.settings._replace(timeout=seconds))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        """The item is over, every rerun of it too: forget its clock."""
        try:
            return (yield)
        finally:
            self._clocks.pop(item.nodeid, None)


class Deadline(Generic[T]):
    """A future that takes ``runs``' outcome, or, once ``delay`` seconds have passed first, the
    error a ``cut`` callback gives after ending the calls (the callback runs off pytest's thread)."""

    def __init__(self, runs: concurrent.futures.Future[T], delay: float) -> None:
        self.future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._runs = runs
        self._delay = max(0.0, delay)
        self._lock = threading.Lock()
        self._expiring = False
        self._timer: threading.Timer | None = None

    def start(self, cut: Callable[[], BaseException]) -> None:
        """Arm the deadline; ``cut()`` returns the exception the future ends with."""
        self._timer = threading.Timer(self._delay, self._expire, (cut,))
        self._timer.daemon = True
        self._timer.name = "pytest-omk-sample-deadline"
        self._timer.start()
        self._runs.add_done_callback(self._copy)

    def _copy(self, runs: concurrent.futures.Future[T]) -> None:
        with self._lock:
            if self._expiring or self.future.done():
                return
            if self._timer is not None:
                self._timer.cancel()
            if runs.cancelled():
                self.future.cancel()
            elif (error := runs.exception()) is not None:
                self.future.set_exception(error)
            else:
                self.future.set_result(runs.result())

    def _expire(self, cut: Callable[[], BaseException]) -> None:
        with self._lock:
            if self.future.done():
                return
            self._expiring = True
        error = cut()
        self.future.set_exception(error)


def within_time_limit(
    config: pytest.Config, item: SampleItem, future: RunsFuture, launcher: Launcher
) -> RunsFuture:
    """The future the item's setup waits for: ``future`` bounded by the item's limit, if any."""
    timeouts = config.pluginmanager.get_plugin(PLUGIN_NAME)
    return future if timeouts is None else timeouts.bound(item, future, launcher)
