"""pytest-timeout bounds a whole sample and ends it with one line (docs/works-with.md, issue 51
item 10): its calls are cut and counted, the other samples go on, the item ERRORs at setup.

The fake server never answers the slow sample's third call (it holds it until the server stops),
so the timeout is the only way that sample ends; nothing here depends on how long anything takes
except that the fast samples' answers, given at once, come back within the limit (a sample's time
is only while one of its calls is in flight).
"""

from __future__ import annotations

import re

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set

LIMIT = 5
"""pytest-timeout's limit in seconds: every fast sample is answered at once, the slow one never.
Room for a loaded host: the first item's setup, before the wait, imports the record models under
pytest-timeout's own timer."""
PASSING = [{"type": "not_contains", "value": "never said"}]
HELD = {"fault": "hang", "seconds": 600}
"""Not answered until the server stops (at the test's end)."""


@pytest.fixture
def llm(fake_llm_env: FakeLLM) -> FakeLLM:
    # The slow sample's three repeats: two answered, the third held.
    fake_llm_env.add_rule("slow question", replies=["one", "two", HELD])
    return fake_llm_env


def write_samples(pytester: pytest.Pytester) -> None:
    write_sample_set(
        pytester,
        sample("fast-a", "fast question a", assertions=PASSING),
        sample("slow", "slow question", assertions=PASSING),
        sample("fast-b", "fast question b", assertions=PASSING),
    )


def run_with_limit(omk_run: OmkRun, *args: str, subprocess: bool) -> pytest.RunResult:
    return omk_run(
        "--omk-executor=openai",
        "--omk-repeat=3",
        "--omk-timeout=300",  # the per-call timeout never comes into it
        "--omk-retries=0",
        "--omk-report=r.json",
        "-p",
        "timeout",
        *args,
        subprocess=subprocess,
    )


def check_run(pytester: pytest.Pytester, result: pytest.RunResult, llm: FakeLLM) -> None:
    result.assert_outcomes(passed=2, errors=1)
    out = result.stdout.str() + result.stderr.str()
    line = f"omk: sample timed out after {LIMIT} s (pytest-timeout); 2 of 3 calls answered, 1 cut off"
    assert line in out
    assert re.search(r"ERROR .*slow.* - Failed: omk: sample timed out", out)
    # No frames: not the plugin's, asyncio's or httpx's, and no stack dump of pytest-timeout's.
    for frames in ("pytest_omk/", "asyncio/", "httpx/", "httpcore/", "Traceback", "Stack of", "Timeout +"):
        assert frames not in out
    assert len(out.splitlines()) < 60
    report = load_report(pytester.path / "r.json")
    records = report_samples(report)
    slow = records["slow"]
    assert slow["outcome"] == "error"
    assert slow["error"] == line
    # Every call the server saw is counted: the two answers and the call that was cut.
    assert slow["modelCalls"] == {"live": 3, "replayed": 0}
    assert slow["usage"]["model"]["failed"] == 1
    assert report["summary"]["usage"]["model"]["calls"] == 9 == len(llm.requests)
    assert {records[s]["outcome"] for s in ("fast-a", "fast-b")} == {"passed"}
    assert sum(1 for request in llm.requests if "slow question" in request.user) == 3


@pytest.mark.floor("pytest-timeout")
def test_a_sample_over_its_time_errors_in_one_line_with_the_signal_method(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    # In this process (the lowest-bounds run proves pytest-timeout's floor with it): the signal
    # method's alarm would fail the item from inside the wait, after dumping every thread's stack.
    write_samples(pytester)
    result = run_with_limit(omk_run, f"--timeout={LIMIT}", "--timeout-method=signal", subprocess=False)
    check_run(pytester, result, llm)


@pytest.mark.floor("pytest-timeout")
@pytest.mark.multiprocess
def test_the_thread_method_and_the_ini_key_end_the_sample_the_same_way(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    # pytest-timeout's thread method would dump every stack and end the process (os._exit): the
    # wait for the sample's calls is bounded by pytest-omk instead, so the run goes on.
    write_samples(pytester)
    pytester.makeini(f"[pytest]\ntimeout = {LIMIT}\ntimeout_method = thread\n")
    result = run_with_limit(omk_run, subprocess=True)  # the thread method would end this process
    check_run(pytester, result, llm)


@pytest.mark.multiprocess
def test_an_xdist_worker_ends_the_sample_the_same_way(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    write_samples(pytester)
    result = run_with_limit(omk_run, f"--timeout={LIMIT}", "-n", "2", subprocess=True)
    check_run(pytester, result, llm)


MARK_SLOW = f"""
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        if item.name.endswith("slow"):
            item.add_marker(pytest.mark.timeout({LIMIT}))
"""


@pytest.mark.floor("pytest-timeout", "pytest-rerunfailures")
def test_a_rerun_gets_the_whole_limit_again(pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM) -> None:
    # The limit comes from the marker on that sample alone. The rerun asks the model again (take
    # 1): its three calls are all held, and it times out in its own limit instead of waiting for
    # them for good.
    write_samples(pytester)
    pytester.makeconftest(MARK_SLOW)
    result = run_with_limit(omk_run, "--reruns=1", subprocess=False)
    outcomes = {k: v for k, v in result.parseoutcomes().items() if k not in ("warning", "warnings")}
    assert outcomes == {"passed": 2, "errors": 1, "rerun": 1}
    out = result.stdout.str()
    assert f"timed out after {LIMIT} s (pytest-timeout); 0 of 3 calls answered, 3 cut off" in out
    assert "pytest_omk/" not in out and "Stack of" not in out
    assert sum(1 for request in llm.requests if "slow question" in request.user) == 6
