"""End to end: ``--omk-budget-usd`` / ``--omk-budget-tokens`` stop live calls at the cap (issue 46).

The model under test (``tests.support.executors.priced_executor``) asks the loopback fake model
server for every answer and reports a fixed price per call, so the calls are counted where they
arrive (the server), not where the plugin says it made them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, parse_junit, sample, write_sample_set
from tests.support.executors import priced_samples
from tests.support.wrapped import unwrapped

SAMPLES = 12
PRICE = 0.01


@pytest.fixture
def priced(pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    check = {"type": "contains", "value": "hello"}
    return priced_samples(pytester, monkeypatch, fake_llm, count=SAMPLES, price=PRICE, check=check)


def _skipped_for_budget(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        s
        for s in document["samples"]
        if s["outcome"] == "skipped" and (s.get("skipReason") or "").startswith("omk budget")
    ]


def test_budget_stops_live_calls_within_one_wave(
    priced: FakeLLM, omk_run: OmkRun, pytester: pytest.Pytester
) -> None:
    concurrency = 2
    result = omk_run(
        "--omk-budget-usd",
        "0.035",
        "--omk-concurrency",
        str(concurrency),
        "--omk-report",
        "r.json",
        "--omk-markdown",
        "r.md",
        "--junitxml",
        "r.xml",
        "-rs",
    )
    calls = len(priced.requests)
    # 0.035 allows three calls of 0.01; the calls in flight when the cap is reached may finish.
    assert 3 <= calls <= 3 + concurrency, calls
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == calls
    assert outcomes.get("skipped", 0) == SAMPLES - calls
    assert outcomes.get("failed", 0) == 0 and outcomes.get("errors", 0) == 0
    # An incomplete eval is not a pass.
    assert result.ret == 1
    document = load_report(Path(pytester.path / "r.json"))
    assert len(_skipped_for_budget(document)) == SAMPLES - calls
    budget = document["summary"]["budget"]
    assert budget["limitUSD"] == 0.035
    assert budget["notRun"] == SAMPLES - calls
    assert abs(budget["spentUSD"] - PRICE * calls) < 1e-9
    shown = [line for line in unwrapped(result).lines if line.startswith("omk budget: ")]
    assert shown and f"; {SAMPLES - calls} samples not run" in shown[0], shown  # one line, wrapped or not
    assert f"{SAMPLES - calls} samples not run" in (pytester.path / "r.md").read_text(encoding="utf-8")
    junit = parse_junit(pytester.path / "r.xml")
    assert junit.suite_properties["omk.budget.not_run"] == str(SAMPLES - calls)
    skipped = [case for case in junit.cases.values() if case.skipped]
    assert len(skipped) == SAMPLES - calls and all("omk budget" in case.skipped[0] for case in skipped)


def test_budget_incomplete_can_be_allowed(priced: FakeLLM, omk_run: OmkRun) -> None:
    result = omk_run("--omk-budget-usd", "0.015", "--omk-concurrency", "1", "--omk-allow-incomplete")
    assert len(priced.requests) == 1
    assert result.parseoutcomes().get("skipped") == SAMPLES - 1
    assert result.ret == 0


def test_replayed_calls_cost_nothing(priced: FakeLLM, omk_run: OmkRun, pytester: pytest.Pytester) -> None:
    first = omk_run("--omk-record-mode=all", "--omk-recordings=rec")
    assert first.ret == 0 and len(priced.requests) == SAMPLES
    # Everything replays: a budget of one call does not stop a single sample.
    again = omk_run("--omk-record-mode=none", "--omk-recordings=rec", "--omk-budget-usd", "0.01")
    assert again.ret == 0
    assert again.parseoutcomes().get("passed") == SAMPLES
    assert len(priced.requests) == SAMPLES


def test_baseline_gate_counts_budget_skips_as_not_run(
    priced: FakeLLM, omk_run: OmkRun, pytester: pytest.Pytester
) -> None:
    base = omk_run("--omk-report", "base.json")
    assert base.ret == 0
    result = omk_run(
        "--omk-budget-usd",
        "0.025",
        "--omk-concurrency",
        "1",
        "--omk-allow-incomplete",
        "--omk-baseline",
        "base.json",
        "--omk-fail-on-regression",
        "0",
        "--omk-report",
        "r.json",
    )
    document = load_report(Path(pytester.path / "r.json"))
    section = document["baseline"]
    ran = SAMPLES - len(_skipped_for_budget(document))
    assert section["matched"] == ran
    assert section["notRun"] == SAMPLES - ran
    assert section["regressions"] == []
    assert result.ret == 0


def test_unpriced_calls_are_counted_by_tokens(
    pytester: pytest.Pytester, fake_llm: FakeLLM, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local server's model has no price: the USD budget cannot see it, the token budget can."""
    fake_llm.add_rule(None, "hello there")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unpriced")
    write_sample_set(
        pytester,
        *[
            sample(f"s{i}", f"question {i}", assertions=[{"type": "contains", "value": "hello"}])
            for i in range(6)
        ],
    )
    result = omk_run(
        "--omk-executor",
        "openai",
        "--omk-model",
        "local-tiny-model",
        "--omk-concurrency",
        "1",
        "--omk-budget-usd",
        "1",
        "--omk-budget-tokens",
        "1",
        "--omk-report",
        "r.json",
    )
    assert len(fake_llm.requests) == 1
    assert result.ret == 1
    document = load_report(Path(pytester.path / "r.json"))
    budget = document["summary"]["budget"]
    # The spend by role is in the one usage block; the budget section keeps the totals.
    assert document["summary"]["usage"]["model"]["spent"]["unpricedCalls"] == 1
    assert budget["tokens"] > 0
    assert "unpriced" in result.stdout.str()


APP = '''
"""An app under test: one chat completion per question, over plain httpx."""
import os

import httpx

# One client for every call, as an app keeps one: httpx.post builds a client (and loads the TLS
# certificates) per call, which cost more than the call.
CLIENT = httpx.Client(timeout=30)


def answer(request):
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": request.prompt}]}
    headers = {"authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "")}
    reply = CLIENT.post(base + "/chat/completions", json=body, headers=headers)
    reply.raise_for_status()
    return reply.json()["choices"][0]["message"]["content"]
'''


@pytest.mark.parametrize("concurrency", [1, 2])
def test_an_apps_model_calls_ask_the_budget(
    pytester: pytest.Pytester,
    fake_llm: FakeLLM,
    omk_run: OmkRun,
    monkeypatch: pytest.MonkeyPatch,
    concurrency: int,
) -> None:
    """The app runs live; its model calls reach the provider through the gateway, which prices
    each from the provider's usage and stops at the cap (they were never counted before)."""
    fake_llm.add_rule(None, "hello there")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-app-budget")
    (pytester.path / "myapp.py").write_text(APP, encoding="utf-8")
    # Prompts long enough, and none inside another, for the gateway to tell whose call it is.
    # Five dollars per thousand tokens: each call here costs a few cents.
    pytester.makeini("[pytest]\npythonpath = .\nomk_prices =\n    gpt-4o-mini = 5000 5000\n")
    write_sample_set(
        pytester,
        *[
            sample(
                f"s{i:02d}",
                f"Customer question number {i}: where is my order?",
                assertions=[{"type": "contains", "value": "hello"}],
            )
            for i in range(SAMPLES)
        ],
    )
    result = omk_run(
        "--omk-executor",
        "python:myapp:answer",
        "--omk-record-mode",
        "new_episodes",
        "--omk-concurrency",
        str(concurrency),
        "--omk-budget-usd",
        "0.05",
        "--omk-report",
        "r.json",
    )
    calls = len(fake_llm.requests)
    document = load_report(Path(pytester.path / "r.json"))
    budget = document["summary"]["budget"]
    per_call = budget["spentUSD"] / calls
    assert per_call > 0  # priced from the provider's usage
    # Admitted while the projected spend fits; the calls in flight when it stops may finish.
    assert calls <= int(0.05 / per_call) + concurrency, (calls, per_call)
    assert 1 <= calls < SAMPLES
    skipped = _skipped_for_budget(document)
    assert len(skipped) == SAMPLES - calls
    assert result.parseoutcomes().get("passed") == calls
    # Every call the server saw is counted once, as the app's live call.
    assert f"model calls: {calls} live, 0 replayed" in result.stdout.str()
    assert result.ret == 1


def test_a_sample_refused_partway_keeps_the_calls_it_made_in_its_record(
    priced: FakeLLM, omk_run: OmkRun, pytester: pytest.Pytester
) -> None:
    """The budget's skip and the calls noted in the record are separate features around the wait
    (``pytest_omk.plugin.item_setup``): a sample refused after its first repeat is skipped, and its
    record still counts the call it made, as the server saw it."""
    result = omk_run(
        "-k", "s00", "--omk-repeat=3", "--omk-budget-usd=0.015", "--omk-concurrency=1", "--omk-report=r.json"
    )  # fmt: skip
    result.assert_outcomes(skipped=1)
    assert len(priced.requests) == 1
    (record,) = load_report(Path(pytester.path / "r.json"))["samples"]
    assert record["outcome"] == "skipped" and record["skipReason"].startswith("omk budget")
    # Before any call is noted a record's usage is empty: here it holds the one answered call.
    spent = record["usage"]["model"]["spent"]
    assert spent["pricedCalls"] == 1 and spent["costUSD"] == PRICE
    assert record["modelCalls"]["live"] >= 1
