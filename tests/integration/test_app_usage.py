"""An app under test's calls are counted from what the gateway saw (issue 51, items 3 and 7).

The app returns a plain string, as most apps do: what its model calls used is read by the model
gateway from each answer, live or replayed, and recorded in the call ledger under the sample, once
per call; every repeat's calls are counted. Before, such a sample's tokens and cost were unknown.
"""

from __future__ import annotations

import sys

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, report_samples, run_pytest, sample, write_sample_set

APP = """
import os

import httpx


def answer(request):
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": request.prompt}]}
    headers = {"authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "none")}
    reply = httpx.post(base + "/chat/completions", json=body, headers=headers, timeout=30)
    reply.raise_for_status()
    return reply.json()["choices"][0]["message"]["content"]
"""

REPEAT = 3


def _usage(pytester: pytest.Pytester, report: str) -> dict[str, object]:
    record = report_samples(load_report(pytester.path / report))["order"]
    return dict(record["usage"]["model"])


def test_an_app_returning_text_is_counted_from_its_calls_every_repeat(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-app-usage-sentinel")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    fake_llm.add_rule("Where is my order", {"text": "It ships on Monday.", "usage": [12, 7]})
    (pytester.path / "myapp.py").write_text(APP, encoding="utf-8")
    pytester.makeini("[pytest]\npythonpath = .\n")
    write_sample_set(pytester, sample("order", "Where is my order?", assertions=[
        {"type": "contains", "value": "Monday"}]))  # fmt: skip
    args = ("--omk-executor=python:myapp:answer", f"--omk-repeat={REPEAT}", "--omk-recordings=rec")
    omk_run(*args, "--omk-record-mode=new_episodes", "--omk-report=live.json").assert_outcomes(passed=1)
    assert len(fake_llm.requests) == REPEAT
    live = _usage(pytester, "live.json")
    # One record per call the gateway saw, each repeat's; tokens read from the provider's answers.
    assert (live["calls"], live["live"], live["replayed"]) == (REPEAT, REPEAT, 0)
    assert (live["inputTokens"], live["outputTokens"]) == (12 * REPEAT, 7 * REPEAT)
    assert live["spent"]["tokens"] == 19 * REPEAT  # type: ignore[index]
    fake_llm.stop()
    monkeypatch.setenv("CI", "true")  # replay only
    run_pytest(pytester, *args, "--omk-report=replayed.json").assert_outcomes(passed=1)
    replayed = _usage(pytester, "replayed.json")
    # Replayed calls count at their recorded usage, and spend nothing now.
    assert (replayed["calls"], replayed["live"], replayed["replayed"]) == (REPEAT, 0, REPEAT)
    assert (replayed["inputTokens"], replayed["outputTokens"]) == (12 * REPEAT, 7 * REPEAT)
    assert "spent" not in replayed
