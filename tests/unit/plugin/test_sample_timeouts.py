"""The pure parts of a sample's time limit under pytest-timeout: the sample's own time, the one
line it ends with, and the deadline future that ends the wait (no clock is relied on: the deadline
is fed the time left, and the runs never finish unless told to)."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import pytest

from pytest_omk.models.accounting import CallLog, CallRecord
from pytest_omk.plugin.sample_timeouts import Deadline, timed_out_line


def test_a_samples_time_is_when_one_of_its_calls_is_in_flight() -> None:
    log = CallLog()
    assert log.busy() == 0.0  # nothing sent: a replayed or queued sample has used no time
    before = time.monotonic()
    log.call_sent()
    log.call_sent()  # two calls at once count once
    log.call_ended()
    log.call_ended()
    after = time.monotonic()
    used = log.busy()
    assert 0.0 <= used <= after - before
    assert log.busy() == used  # nothing in flight: the sample's time stands still


def test_the_line_counts_the_answered_calls_and_those_cut_off() -> None:
    log = CallLog()
    for record in (CallRecord("model"), CallRecord("model"), CallRecord("model", failed=True)):
        log.add(record)
    assert timed_out_line(2, log) == (
        "omk: sample timed out after 2 s (pytest-timeout); 2 of 3 calls answered, 1 cut off"
    )
    assert timed_out_line(1.5, CallLog()).endswith("; none of its calls was answered")
    assert timed_out_line(2, log, took=3.25) == (
        "omk: sample timed out after 2 s (pytest-timeout); its calls took 3.2 s (3 answered)"
    )


def test_runs_that_finish_first_are_the_result() -> None:
    runs: concurrent.futures.Future[list[str]] = concurrent.futures.Future()
    cuts: list[str] = []

    def cut() -> BaseException:
        cuts.append("cut")
        return RuntimeError("late")

    deadline = Deadline(runs, lambda: 3600.0)
    deadline.start(cut)
    runs.set_result(["run"])
    assert deadline.future.result() == ["run"] and cuts == []


def test_the_deadline_looks_again_until_no_time_is_left_then_cuts() -> None:
    runs: concurrent.futures.Future[list[str]] = concurrent.futures.Future()
    left = iter([0.001, 0.001, 0.0])  # the sample's time left, as each look finds it
    looks: list[int] = []
    cut_done = threading.Event()

    def remaining() -> float:
        looks.append(1)
        return next(left)

    def cut() -> BaseException:
        runs.cancel()  # as the launcher's cut does: the runs end cancelled before the error is set
        cut_done.set()
        return pytest.fail.Exception("omk: sample timed out", pytrace=False)

    deadline = Deadline(runs, remaining)
    deadline.start(cut)
    with pytest.raises(pytest.fail.Exception, match="timed out"):
        deadline.future.result()
    assert len(looks) == 3 and cut_done.is_set() and not deadline.future.cancelled()
