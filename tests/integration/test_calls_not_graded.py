"""Every call the server answered is counted, those made for samples that never ran too.

The model under test asks a loopback server that counts what arrives (``FakeLLM.requests``). A run
cut short (``-x``, ``--maxfail``) has started more samples' calls than it grades: the summary's
``usage`` (JSON) and the terminal must add up to what the server answered, the calls of samples
not run counted apart as ``notGraded`` (docs/reporting.md, "Every call is counted").
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report
from tests.support.executors import priced_samples

SAMPLES = 12
PRICE = 0.01


@pytest.fixture
def failing(pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    """Twelve samples whose every answer fails its check: the first graded one stops ``-x``."""
    check = {"type": "contains", "value": "goodbye"}
    return priced_samples(pytester, monkeypatch, fake_llm, count=SAMPLES, price=PRICE, check=check)


def _model_usage(document: dict[str, Any]) -> dict[str, Any]:
    usage: dict[str, Any] = document["summary"]["usage"]["model"]
    return usage


# A failed sample is two failures to pytest (its check's subtest and the sample): --maxfail=4 stops
# after the second sample.
@pytest.mark.parametrize(("stop", "graded"), [("-x", 1), ("--maxfail=4", 2)])
def test_calls_of_samples_not_run_are_counted_as_not_graded(
    failing: FakeLLM, omk_run: OmkRun, pytester: pytest.Pytester, stop: str, graded: int
) -> None:
    result = omk_run(stop, "--omk-concurrency=4", "--omk-report=r.json", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    answered = len(failing.requests)
    assert answered > graded  # the window started more samples than the stop let run
    document = load_report(pytester.path / "r.json")
    usage = _model_usage(document)
    assert usage["calls"] == usage["live"] == answered
    assert usage["notGraded"] == answered - graded
    assert document["summary"]["costUSD"] == pytest.approx(PRICE * answered)
    ran = [row for row in document["samples"] if row["outcome"] == "failed"]
    assert len(ran) == graded
    assert sum(row["usage"]["model"]["calls"] for row in document["samples"]) == graded
    result.stdout.fnmatch_lines(
        [f"*{answered - graded} calls for samples not run (not graded)*"], consecutive=False
    )


def test_a_run_that_grades_every_sample_has_nothing_not_graded(
    failing: FakeLLM, omk_run: OmkRun, pytester: pytest.Pytester
) -> None:
    result = omk_run("--omk-concurrency=4", "--omk-report=r.json", "--omk-budget-usd=0.035")
    answered = len(failing.requests)
    usage = _model_usage(load_report(pytester.path / "r.json"))
    assert usage["calls"] == answered
    assert usage.get("notGraded", 0) == 0
    assert "samples not run (not graded)" not in result.stdout.str()


@pytest.mark.multiprocess
def test_under_xdist_the_workers_calls_for_samples_not_run_are_counted(
    failing: FakeLLM, omk_run: OmkRun, pytester: pytest.Pytester
) -> None:
    result = omk_run("-x", "-n", "2", "--omk-concurrency=4", "--omk-report=r.json", "-p", "no:randomly")
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)  # xdist's -x
    answered = len(failing.requests)
    document = load_report(pytester.path / "r.json")
    usage = _model_usage(document)
    graded = sum(row["usage"]["model"]["calls"] for row in document["samples"])
    assert usage["calls"] == usage["live"] == answered
    assert usage.get("notGraded", 0) == answered - graded
    assert document["summary"]["costUSD"] == pytest.approx(PRICE * answered)
