"""Every call counted by role: the judge's calls, tokens and cost are shown apart from the model's
in the terminal, the JSON report, JUnit, HTML and Markdown, a sample that errors included."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import (
    FakeCommand,
    OmkRun,
    judge_reply,
    judged_sample,
    load_report,
    parse_junit,
    point_openai_at,
    report_samples,
    sample,
    write_sample_set,
)

KEY = "sk-usage-by-role-sentinel-2b7e"


def judge_answer(reply: dict[str, Any]) -> dict[str, Any]:
    return {**reply, "costUSD": 0.001, "inputTokens": 100, "outputTokens": 10}


def test_the_judge_is_counted_apart_and_errors_count_their_calls(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    fake_llm: FakeLLM,
    fake_judge: FakeCommand,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    point_openai_at(fake_llm, monkeypatch, KEY)
    fake_llm.add_rule("Say hi", {"text": "hi there", "usage": [10, 5]})
    write_sample_set(
        pytester,
        judged_sample(),
        sample("broken", "Say hi", rubric={"tone": {"criterion": "Is warm and friendly", "weight": 1}}),
    )
    judge = fake_judge.script(
        {"graded": judge_answer(judge_reply(4)), "broken": judge_answer({"output": "no JSON"})}
    )
    result = omk_run(
        "--omk-executor=openai", f"--omk-judge={judge}",
        "--omk-report=r.json", "--omk-html=r.html", "--omk-markdown=r.md", "--junitxml=j.xml",
    )  # fmt: skip
    result.assert_outcomes(passed=1, errors=1)
    # 2 model calls; the judge: 1 for "graded", 2 for "broken" (its unusable reply is asked again).
    result.stdout.fnmatch_lines([
        "*model calls: 5 live, 0 replayed*",
        "*model under test: 2 calls (2 live, 0 replayed), tokens 20 in / 10 out*",
        "*judge: 3 calls (3 live, 0 replayed), tokens 300 in / 30 out, $0.003*",
    ])  # fmt: skip
    document = load_report(pytester.path / "r.json")
    usage = document["summary"]["usage"]
    model_cost = usage["model"].pop("costUSD")  # the provider's price, when known for this endpoint
    # What the live calls spent now: the budget's figures, in the one per-role usage block.
    assert usage["model"].pop("spent")["tokens"] == 30
    assert usage["judge"].pop("spent") == {"costUSD": 0.003, "pricedCalls": 3, "unpricedCalls": 0, "tokens": 330,
                                           "unpricedTokens": 0, "estimatedCalls": 0}  # fmt: skip
    assert usage["model"] == {"calls": 2, "live": 2, "replayed": 0, "failed": 0, "inputTokens": 20,
                              "outputTokens": 10, "costUnknown": 0 if model_cost is not None else 2}  # fmt: skip
    assert usage["judge"] == {"calls": 3, "live": 3, "replayed": 0, "failed": 0, "inputTokens": 300,
                              "outputTokens": 30, "costUSD": 0.003, "costUnknown": 0}  # fmt: skip
    total = document["summary"]["costUSD"]
    assert total == round(0.003 + (model_cost or 0), 6)  # the judge's cost is in the run's
    samples = report_samples(document)
    assert samples["broken"]["outcome"] == "error"
    assert samples["broken"]["modelCalls"] == {"live": 3, "replayed": 0}
    assert samples["broken"]["usage"]["judge"]["calls"] == 2
    assert samples["graded"]["usage"]["judge"]["costUSD"] == 0.001
    junit = parse_junit(pytester.path / "j.xml")
    graded = junit.cases["eval-samples.json::graded"].props
    assert graded["omk.judge.cost_usd"] == "0.001000" and graded["omk.model.calls"] == "1"
    assert junit.cases["eval-samples.json::broken"].props["omk.judge.calls"] == "2"
    assert junit.suite_properties["omk.judge.cost_usd.total"] == "0.003000"
    assert junit.suite_properties["omk.cost_usd.total"] == f"{total:.6f}"
    for page in ("r.html", "r.md"):
        text = (pytester.path / page).read_text(encoding="utf-8")
        assert "judge" in text and "$0.003" in text, page
