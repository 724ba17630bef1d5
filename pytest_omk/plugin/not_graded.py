"""The calls of samples never run: when a run may wait for them, and an xdist worker's hand-over.

A run that ends normally (``-x``, ``--maxfail``, a budget stop, the end of the run loop) waits for
the calls it has already sent, which are paid for, and counts them; Ctrl-C waits for nothing
(:func:`ctrl_c`). Under xdist each worker starts the samples the controller sends it ahead of
running them, so a run cut short leaves some never run, their calls answered and paid for. The
worker sends those calls (one plain dict per call) and how many of its calls were cut off in
flight in its ``workeroutput``; the controller's summary counts them with its own
(docs/reporting.md, "Every call is counted").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from pytest_omk.models.accounting import CallLog, CallRecord
from pytest_omk.report.not_graded import cut_lines

OUTPUT_KEY = "omk_not_graded"
"""The worker's ``workeroutput`` key: a list of :class:`CallRecord` fields, one dict per call."""
CUT_KEY = "omk_cut_calls"
"""The worker's ``workeroutput`` key: how many calls it sent and cancelled before their answer."""


def ctrl_c(exc: BaseException, session: pytest.Session) -> bool:
    """Whether the run loop ended by Ctrl-C (a bare ``KeyboardInterrupt``): nothing is waited for
    then. pytest's own stop (``session.Interrupted``, a ``KeyboardInterrupt`` too) ends normally."""
    return isinstance(exc, KeyboardInterrupt) and not isinstance(exc, session.Interrupted)


class WorkerNotGraded:
    """On a worker: puts the calls of its untaken samples in its ``workeroutput`` at the end."""

    def __init__(
        self, config: pytest.Config, untaken: Callable[[], Iterable[CallLog]], cut: Callable[[], int]
    ) -> None:
        self._config = config
        self._untaken = untaken
        self._cut = cut

    def pytest_sessionfinish(self) -> None:
        """The run loop has ended (and settled the calls it sent): hand the calls on."""
        records = [dataclasses.asdict(record) for log in self._untaken() for record in log.records]
        output: dict[str, Any] = getattr(self._config, "workeroutput", {})
        output[OUTPUT_KEY] = records
        output[CUT_KEY] = self._cut()


def worker_log(output: dict[str, Any]) -> CallLog | None:
    """A worker's not-graded calls as one call log (none when it sent none)."""
    records = output.get(OUTPUT_KEY)
    if not isinstance(records, list) or not records:
        return None
    names = {field.name for field in dataclasses.fields(CallRecord)}
    log = CallLog()
    for fields in records:
        # Written by our own worker; kept to the record's fields all the same.
        if isinstance(fields, dict) and fields.get("role") in ("model", "judge"):
            log.add(CallRecord(**{key: value for key, value in fields.items() if key in names}))
    return log


def worker_cut(output: dict[str, Any]) -> int:
    """How many calls a worker cut off in flight (0 when it says nothing usable)."""
    cut = output.get(CUT_KEY)
    return cut if isinstance(cut, int) and not isinstance(cut, bool) and cut > 0 else 0


class CutCalls:
    """On the controller: says how many calls were cut off in flight (Ctrl-C), its own and its
    workers', after the ``omk scores`` section (or alone, when no sample finished)."""

    def __init__(self, cut: Callable[[], int]) -> None:
        self._cut = cut
        self._workers = 0

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist: a worker finished; add the calls it cut off."""
        self._workers += worker_cut(getattr(node, "workeroutput", {}))

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The line, when any call was cut off."""
        for line in cut_lines(self._cut() + self._workers):
            terminalreporter.write_line(line)
