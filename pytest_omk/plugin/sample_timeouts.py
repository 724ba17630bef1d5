"""pytest-timeout's limit applied to a whole sample, ended with one line (docs/works-with.md).

pytest-timeout arms a timer for each item (``--timeout``, the ``timeout`` ini key, the
``PYTEST_TIMEOUT`` variable, the ``timeout`` marker) and, when it fires, dumps every thread's stack
and fails the item (``signal`` method) or ends the process (``thread``). A sample's time is mostly
its model calls, which pytest-omk starts ahead of the item and waits for in the item's setup: left
alone, the timer bounds only that wait and fires in the middle of it, printing the call loop's
frames. :class:`SampleTimeouts` takes the wait over:

- pytest-timeout hands it each item's settings through its own ``pytest_timeout_set_timer`` hook,
  so which limit applies (marker, option, ini key, variable) is decided by pytest-timeout itself;
- the sample's time is its own: the seconds during which at least one of its live calls was sent
  and not yet ended (:meth:`~pytest_omk.models.accounting.CallLog.busy`), wherever pytest was
  meanwhile; waiting for a call slot held by other samples is not its time;
- while the item waits for its calls, pytest-timeout's timer is paused and this object ends the
  wait once the sample's time reaches the limit: the calls still running are cut (cancelled, a call
  already sent counted as failed), and the item ERRORs with one line, a setup failure as
  pytest-timeout's own would be;
- after the wait, pytest-timeout's timer is set again, through the same hook, for what is left of
  the sample's limit (grading and teardown stay under pytest-timeout's own watch);
- a rerun (pytest-rerunfailures) asks the model again and gets the whole limit again.

Without pytest-timeout, or without a limit for the item, nothing here runs.
"""

from __future__ import annotations

import concurrent.futures
import threading
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
    log: CallLog | None = None
    """The calls of the attempt being waited for (their :meth:`CallLog.busy` is the sample's time)."""
    attempts: int = 0


def timed_out_line(limit: float, log: CallLog | None, took: float | None = None) -> str:
    """The one line a sample whose time ran out ERRORs with (``took``: its calls ended, later)."""
    records = log.records if log is not None else ()
    cut = sum(1 for record in records if record.failed)
    head = f"omk: sample timed out after {limit:g} s (pytest-timeout)"
    if took is not None:
        return f"{head}; its calls took {took:.1f} s ({len(records)} answered)"
    if not records:
        return f"{head}; none of its calls was answered"
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
        """Note a sample's limit; pytest-timeout (or whoever implements the timer) still sets it.

        Under ``timeout_func_only`` only the test function is timed, and the wait is setup: the
        timer is set in the call phase and this object leaves it alone."""
        if isinstance(item, SampleItem) and settings.timeout and not settings.func_only:
            self._clocks.setdefault(item.nodeid, Clock(float(settings.timeout), settings))

    def bound(self, item: SampleItem, future: RunsFuture, launcher: Launcher) -> RunsFuture:
        """``future``, or one that ends with the item's timeout once the sample's time is up."""
        clock = self._clocks.get(item.nodeid)
        log = launcher.logs.get(item.nodeid)
        if clock is None or log is None:
            return future
        clock.log = log
        # Paused while the item waits: this object's deadline ends the wait instead.
        item.config.hook.pytest_timeout_cancel_timer(item=item)
        if future.done():  # answered before pytest got to it: in time, or over its limit
            took = log.busy()
            return (
                future if took <= clock.limit else self._expired(item, timed_out_line(clock.limit, log, took))
            )
        deadline = Deadline(future, lambda: clock.limit - log.busy())
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
        """A rerun (pytest-rerunfailures) asks the model again: it gets the whole limit again, and
        pytest-timeout's timer with it (it may have fired, or been left paused)."""
        clock = self._clocks.get(item.nodeid)
        if clock is None:
            return
        clock.attempts += 1
        if clock.attempts > 1:
            item.config.hook.pytest_timeout_cancel_timer(item=item)
            self._set_timer(item, clock, clock.limit)

    def _resume(self, item: pytest.Item, *, timed_out: bool) -> None:
        clock = self._clocks.get(item.nodeid)
        if clock is None or clock.log is None:
            return
        # Timed out: the timer stays off, as pytest-timeout's own after it fired. Else the rest of
        # the sample's limit, for grading and teardown (its calls' time is final now).
        left = clock.limit - clock.log.busy()
        clock.log = None
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
    """A future that takes ``runs``' outcome, or, once ``remaining()`` seconds are used up first,
    the error a ``cut`` callback gives after ending the calls (both off pytest's thread).

    ``remaining`` may only shrink as fast as time passes (a sample's own time does): a watcher
    thread sleeps that long, looks again, and cuts once nothing is left."""

    def __init__(self, runs: concurrent.futures.Future[T], remaining: Callable[[], float]) -> None:
        self.future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._runs = runs
        self._remaining = remaining
        self._lock = threading.Lock()
        self._settled = threading.Event()
        self._expiring = False

    def start(self, cut: Callable[[], BaseException]) -> None:
        """Watch the deadline; ``cut()`` returns the exception the future ends with."""
        self._runs.add_done_callback(self._copy)
        watcher = threading.Thread(target=self._watch, args=(cut,), name="pytest-omk-sample-deadline")
        watcher.daemon = True
        watcher.start()

    def _copy(self, runs: concurrent.futures.Future[T]) -> None:
        with self._lock:
            if self._expiring or self.future.done():
                return
            if runs.cancelled():
                self.future.cancel()
            elif (error := runs.exception()) is not None:
                self.future.set_exception(error)
            else:
                self.future.set_result(runs.result())
        self._settled.set()

    def _watch(self, cut: Callable[[], BaseException]) -> None:
        while (left := self._remaining()) > 0:
            if self._settled.wait(left):
                return
        with self._lock:
            if self.future.done():
                return
            self._expiring = True
        self.future.set_exception(cut())
