"""The pure parts of a sample's time limit under pytest-timeout: when it runs out, the one line it
ends with, and the deadline future that ends the wait (no clock: a zero delay or none at all)."""

from __future__ import annotations

import concurrent.futures
import threading

import pytest

from pytest_omk.models.accounting import CallLog, CallRecord
from pytest_omk.plugin.sample_timeouts import Deadline, overran, sample_deadline, timed_out_line


def test_the_clock_starts_at_the_first_call_sent_or_at_the_item_if_that_was_earlier() -> None:
    assert sample_deadline(began=100.0, limit=5, sent=40.0) == 45.0  # prefetched: its calls' time
    assert sample_deadline(began=100.0, limit=5, sent=120.0) == 105.0  # queued: pytest's wait is bounded
    assert sample_deadline(began=100.0, limit=5, sent=None) == 105.0  # nothing sent yet (or replayed)


def test_calls_answered_before_the_item_are_late_only_past_the_deadline() -> None:
    assert overran(45.0, sent=40.0, ended=44.0) is None
    assert overran(45.0, sent=40.0, ended=52.5) == 12.5
    assert overran(45.0, sent=None, ended=52.5) is None  # all replayed: no clock


def test_the_line_counts_the_answered_calls_and_those_cut_off() -> None:
    log = CallLog()
    for record in (CallRecord("model"), CallRecord("model"), CallRecord("model", failed=True)):
        log.add(record)
    assert timed_out_line(2, log) == (
        "omk: sample timed out after 2 s (pytest-timeout); 2 of 3 calls answered, 1 cut off"
    )
    assert timed_out_line(1.5, CallLog()).endswith(
        "none of its calls was answered or sent yet (each waits for a call slot)"
    )
    assert timed_out_line(2, log, took=3.25) == (
        "omk: sample timed out after 2 s (pytest-timeout); its calls took 3.2 s (3 answered)"
    )


def test_runs_that_finish_first_are_the_result() -> None:
    runs: concurrent.futures.Future[list[str]] = concurrent.futures.Future()
    cuts: list[str] = []
    deadline = Deadline(runs, 3600)
    deadline.start(lambda: cuts.append("cut") or RuntimeError("late"))  # type: ignore[func-returns-value]
    runs.set_result(["run"])
    assert deadline.future.result() == ["run"] and cuts == []


def test_a_deadline_reached_first_cuts_and_ignores_the_runs_cancelled_by_it() -> None:
    runs: concurrent.futures.Future[list[str]] = concurrent.futures.Future()
    cut_done = threading.Event()

    def cut() -> BaseException:
        runs.cancel()  # as the launcher's cut does: the runs end cancelled before the error is set
        cut_done.set()
        return pytest.fail.Exception("omk: sample timed out", pytrace=False)

    deadline = Deadline(runs, 0)
    deadline.start(cut)
    with pytest.raises(pytest.fail.Exception, match="timed out"):
        deadline.future.result()
    assert cut_done.is_set() and not deadline.future.cancelled()
