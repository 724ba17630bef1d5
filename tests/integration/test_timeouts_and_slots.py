"""More calls in flight than a server serves in time: timeouts count from when a call is sent, and
a wave of timeouts lowers the run's concurrency as a 429 does (docs/executors.md, "Adaptive
concurrency")."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM, RecordedRequest
from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set

KEY = "sk-timeouts-test-3e1f7a"
PASSING = [{"type": "not_contains", "value": "never said"}]
SERVED_IN = 0.6
"""Seconds the fake takes over a retried call: retries sent together overlap for that long."""
TIMEOUT = 2.0
"""The run's per-call timeout: far above ``SERVED_IN``, so that a retry never times out again."""


@pytest.fixture
def llm(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return fake_llm


def most_at_once(arrivals: list[float], lasting: float) -> int:
    """The most calls that, arriving at these times and lasting ``lasting`` seconds each, overlap.

    A lower bound of how many were in flight at once: a call ends after the server's answer is
    read, never before ``lasting`` has passed.
    """
    return max((sum(1 for t in arrivals if t <= at < t + lasting) for at in arrivals), default=0)


def test_a_wave_of_timeouts_halves_the_calls_in_flight(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    # Eight calls sent at once all time out (the server answers each only after the timeout);
    # asked again at the same concurrency they would all wait in the same queue. The run cuts to
    # four: the second calls overlap four at a time at most.
    lock = threading.Lock()
    seen: dict[str, int] = {}
    second: list[float] = []

    def note(request: RecordedRequest) -> bool:
        with lock:
            seen[request.user] = seen.get(request.user, 0) + 1
            if seen[request.user] == 2:
                second.append(time.monotonic())
        return True

    for i in range(8):
        slow: dict[str, Any] = {"text": "too late", "latency": TIMEOUT + 0.1}
        fast: dict[str, Any] = {"text": "in time", "latency": SERVED_IN}
        llm.add_rule(f"question {i}.", replies=[slow, fast], predicate=note)
    write_sample_set(pytester, *(sample(f"s{i}", f"question {i}.", assertions=PASSING) for i in range(8)))
    result = omk_run("--omk-executor=openai", "--omk-concurrency=8", f"--omk-timeout={TIMEOUT:g}")
    result.assert_outcomes(passed=8)
    assert len(second) == 8  # every first call timed out: the server answers after the deadline
    assert most_at_once(second, SERVED_IN) <= 4


def test_time_waiting_for_a_slot_of_the_run_is_not_part_of_the_timeout(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    # One call at a time, each 0.4 s: the last waits 1.2 s for its turn, more than the 1 s timeout,
    # and is still not timed out, because its clock starts when it is sent.
    llm.script(default={"text": "answer", "latency": 0.4})
    write_sample_set(pytester, *(sample(f"s{i}", f"q{i}", assertions=PASSING) for i in range(4)))
    result = omk_run("--omk-executor=openai", "--omk-concurrency=1", "--omk-timeout=1", "--omk-report=r.json")
    result.assert_outcomes(passed=4)
    assert all(
        r["execution"]["retries"] == 0 for r in report_samples(load_report(pytester.path / "r.json")).values()
    )
    assert len(llm.requests) == 4
