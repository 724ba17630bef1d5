"""Model calls prefetched under pytest-xdist: each worker has its items' calls in flight ahead of
its run loop, no call is made twice, and ``-k``, ``-x`` and ``--maxfail`` behave as in one process.

Concurrency is proven by counting, not timing: the fake server holds every request until a given
number have arrived, so the run passes only when that many calls were in flight at once.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, sample, write_sample_set

KEY = "sk-xdist-prefetch-5b1e0c2d9a7f"

pytest.importorskip("xdist")


@pytest.fixture
def llm(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return fake_llm


def write_questions(pytester: pytest.Pytester, count: int) -> None:
    samples = [
        sample(f"s{i:02d}", f"Question {i}", assertions=[{"type": "contains", "value": "yes"}])
        for i in range(count)
    ]
    write_sample_set(pytester, *samples)


def asked(llm: FakeLLM) -> Counter[str]:
    return Counter(r.user for r in llm.requests)


@pytest.mark.floor("pytest-xdist")
@pytest.mark.multiprocess
def test_two_workers_have_every_call_in_flight_at_once(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    write_questions(pytester, 12)
    llm.add_rule(None, "yes")
    # Without prefetching, each worker holds one call at a time: the gate would never open
    # (each request then waits out the timeout) and the peak would be 2.
    llm.gate(12, timeout=5)
    result = omk_run(
        "--omk-executor",
        "openai",
        "--omk-concurrency",
        "12",
        "-n",
        "2",
        "--omk-report",
        "r.json",
    )
    result.assert_outcomes(passed=12)
    assert llm.peak_in_flight == 12
    assert asked(llm) == Counter({f"Question {i}": 1 for i in range(12)})  # no call made twice
    assert load_report(pytester.path / "r.json")["summary"]["modelCalls"]["live"] == 12


@pytest.mark.multiprocess
def test_each_worker_keeps_to_its_share_of_the_concurrency(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    write_questions(pytester, 12)
    llm.add_rule(None, "yes")
    llm.gate(12, timeout=1)  # never opens: at most 2 x 3 calls may be in flight
    result = omk_run("--omk-executor", "openai", "--omk-concurrency", "6", "-n", "2")
    result.assert_outcomes(passed=12)
    assert llm.peak_in_flight == 6
    assert sum(asked(llm).values()) == 12


@pytest.mark.multiprocess
def test_deselected_items_are_never_called(pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM) -> None:
    write_questions(pytester, 12)
    llm.add_rule(None, "yes")
    llm.gate(3, timeout=5)
    result = omk_run("--omk-executor", "openai", "-n", "2", "-k", "s01 or s02 or s03")
    result.assert_outcomes(passed=3)  # xdist does not count deselected items
    assert asked(llm) == Counter({"Question 1": 1, "Question 2": 1, "Question 3": 1})


@pytest.mark.floor("pytest-xdist")
@pytest.mark.multiprocess
@pytest.mark.parametrize("stop", [("-x",), ("--maxfail", "2")], ids=["x", "maxfail"])
def test_stopping_early_behaves_as_in_one_process(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, stop: tuple[str, ...]
) -> None:
    write_questions(pytester, 40)
    llm.add_rule(None, "no")  # every sample fails its check
    result = omk_run("--omk-executor", "openai", "-n", "2", *stop, "--omk-report", "r.json")
    output = result.stdout.str()
    # xdist ends a stopped run with "Interrupted" (exit 2) whatever the tests are; in one process
    # it is 1. Either way the run stops early, with nothing else in the outcome.
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)
    assert "Traceback" not in output and "cancelled" not in output
    outcomes = result.parseoutcomes()
    # Calls already in flight are cancelled, never turned into errors or skips.
    assert "errors" not in outcomes and "skipped" not in outcomes and "passed" not in outcomes
    assert max(asked(llm).values()) == 1  # no call made twice
    samples = load_report(pytester.path / "r.json")["samples"]
    assert {s["outcome"] for s in samples} == {"failed"}
    # A failed sample counts twice towards --maxfail (its subtest and the item), so each worker
    # stops after its first failed sample; the other may finish the item it was running.
    assert 1 <= len(samples) <= 2 < 40
