"""Budgets, ``--omk-changed`` and ``--omk-repeat auto`` under ``-n 2`` (issue 46): the workers
share the cap, the controller adds up their spend and reports the samples they carried."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set
from tests.support.executors import priced_samples

# The model under test of the --omk-changed test: it logs each call and answers from the prompt.

COUNTING_CONFTEST = """
import pathlib

HERE = pathlib.Path(__file__).parent


def answer(request):
    with (HERE / "calls.log").open("a", encoding="utf-8") as log:
        log.write(request.sample_id + "\\n")
    return "alpha beta"


def pytest_omk_make_executor(config):
    return answer
"""
CHECK = [{"type": "contains", "value": "alpha"}]

pytest.importorskip("xdist")


@pytest.mark.multiprocess
def test_budget_is_shared_by_the_workers(
    pytester: pytest.Pytester, fake_llm: FakeLLM, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = 16
    check = {"type": "contains", "value": "hello"}
    priced_samples(pytester, monkeypatch, fake_llm, count=count, price=0.01, check=check)
    result = omk_run(
        "-n",
        "2",
        "--omk-budget-usd",
        "0.04",
        "--omk-concurrency",
        "2",
        "--omk-report",
        "r.json",
    )
    calls = len(fake_llm.requests)
    # Each worker has half of $0.04 and one call in flight: two calls each, one more in flight at most.
    assert 4 <= calls <= 4 + 2, calls
    assert result.ret == 1
    document = load_report(pytester.path / "r.json")
    budget = document["summary"]["budget"]
    assert budget["notRun"] == count - calls
    assert abs(budget["spentUSD"] - 0.01 * calls) < 1e-9
    spent = document["summary"]["usage"]["model"]["spent"]  # the one per-role usage block
    assert spent["pricedCalls"] == calls


@pytest.mark.multiprocess
def test_changed_under_xdist_reports_the_carried_samples(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.makeconftest(COUNTING_CONFTEST)
    samples = [sample(f"s{i}", f"good {i}", assertions=CHECK) for i in range(6)]
    write_sample_set(pytester, *samples)
    assert omk_run("--omk-report", "base.json").ret == 0
    (pytester.path / "calls.log").unlink()
    samples[2] = sample("s2", "good but edited", assertions=CHECK)
    write_sample_set(pytester, *samples)
    result = omk_run(
        "-n", "2", "--omk-baseline", "base.json", "--omk-changed", "--omk-report", "new.json", subprocess=True
    )
    assert result.ret == 0
    assert (pytester.path / "calls.log").read_text(encoding="utf-8").split() == ["s2"]
    rows = report_samples(load_report(Path(pytester.path / "new.json")))
    assert sorted(rows) == [f"s{i}" for i in range(6)]
    assert [name for name, row in sorted(rows.items()) if not row["carried"]] == ["s2"]
    assert load_report(Path(pytester.path / "new.json"))["summary"]["carried"] == 5
