"""A sample whose judge call fails is an ERROR, and its report still holds what the model said and
how its ordinary checks read: the judge's failure takes nothing else away."""

from __future__ import annotations

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import (
    OmkRun,
    load_report,
    parse_junit,
    report_samples,
    sample,
    write_sample_set,
)

KEY = "sk-judge-failure-test-0c4d21"


def test_a_judge_failure_keeps_the_output_and_the_assertion_readings(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fake_llm.add_rule(reply={"fault": "status", "status": 401, "message": "bad judge key"}, system="judge")
    fake_llm.add_rule("question", "hello world")
    checks = [{"type": "contains", "value": "hello"}, {"type": "contains", "value": "absent"}]
    write_sample_set(
        pytester,
        sample("s", "question", assertions=checks, rubric={"clarity": {"criterion": "clear", "weight": 1}}),
    )
    result = omk_run("--omk-executor=openai", "--omk-judge=openai", "--omk-report=r.json", "--junitxml=j.xml")
    result.assert_outcomes(errors=1)
    record = report_samples(load_report(pytester.path / "r.json"))["s"]
    assert record["outcome"] == "error"
    assert "bad judge key" in record["error"]
    assert record["execution"]["output"] == "hello world"
    assert [(a["type"], a["status"]) for a in record["assertions"]] == [
        ("contains", "pass"),
        ("contains", "fail"),
    ]
    assert record["rubric"]["clarity"]["status"] == "missing"
    case = parse_junit(pytester.path / "j.xml").cases["eval-samples.json::s"]
    assert case.props["omk.assertion.0.contains"] == "pass"
