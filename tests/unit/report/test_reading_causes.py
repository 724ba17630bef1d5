"""Cause codes on missing and error readings: set where the readings are made, carried into the
record (and its schema), and what the terminal groups by instead of the readings' message text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_omk.grade.verdict import verdict
from pytest_omk.judge.parse import JudgeReply
from pytest_omk.judge.readings import assertion_reading, dimension_reading
from pytest_omk.models import Sample
from pytest_omk.models.report_schema import build_report_schema
from pytest_omk.models.results import ExecutionResult, Reading
from pytest_omk.models.run import ExecutionRequest, JudgeOutcome, ResolvedText, SampleRun
from pytest_omk.report.outputs import ReportTargets, write_reports
from pytest_omk.report.records import assertion_records, rubric_records
from pytest_omk.report.terminal import summarize
from tests.support.grading import ENGINE, make_sample, read


@pytest.mark.parametrize(
    ("assertion", "fields", "cause"),
    [
        ({"type": "tools_called", "values": ["Bash"]}, {}, "no-trace"),
        ({"type": "turns_max", "value": 3}, {}, "no-telemetry"),
        ({"type": "cost_max", "value": 0.1}, {}, "no-telemetry"),
        ({"type": "semantic_similarity", "reference": "r"}, {}, "no-judge"),
        (
            {"type": "assert-set", "children": [{"type": "tools_called", "values": ["Bash"]}]},
            {},
            "child-missing",
        ),
    ],
)
def test_graders_name_the_cause(assertion: dict[str, Any], fields: dict[str, Any], cause: str) -> None:
    reading = read(assertion, "output", **fields)
    assert reading.cause == cause and reading.status in ("missing", "fail")


def test_an_error_reading_is_check_error() -> None:
    assert Reading.error("custom check 'c.py' errored: boom").cause == "check-error"


def test_valid_readings_have_no_cause() -> None:
    assert read({"type": "contains", "value": "out"}, "output").cause is None
    assert read({"type": "contains", "value": "zzz"}, "output").cause is None
    assert read({"type": "contains", "value": "out", "not": True}, "output").cause is None


def test_unusable_judge_replies_are_judge_reply() -> None:
    reading, each, _ = dimension_reading(["judge reply is not JSON", "judge reply: score is missing"], 3)
    assert reading.cause == "judge-reply" and [r.cause for r in each] == ["judge-reply", "judge-reply"]
    assert dimension_reading([JudgeReply(4, "fine")], 3)[0].cause is None
    assert assertion_reading("judge reply is not JSON", 3, "faithfulness").cause == "judge-reply"


def test_no_judge_rubric_and_repeats_keep_the_cause() -> None:
    sample = Sample.model_validate(
        {"sample_id": "s", "prompt": "p", "rubric": {"q": {"criterion": "c", "weight": 1}}}
    )
    run = SampleRun(
        ExecutionResult(output="o"), JudgeOutcome(), ResolvedText("p", None), ExecutionRequest("p")
    )

    class Rules:
        strict, min_composite, min_pass_rate = False, None, 1.0

    assert verdict(sample, Path("."), [run], Rules(), ENGINE).rubric["q"].cause == "no-judge"
    assert verdict(sample, Path("."), [run, run], Rules(), ENGINE).rubric["q"].cause == "no-judge"


def test_records_carry_the_cause_only_when_there_is_one() -> None:
    sample = make_sample({"type": "contains", "value": "a"}, {"type": "tools_called", "values": ["Bash"]})
    entries = assertion_records(
        sample.assertions or [], [Reading.passed("ok"), Reading.missing("no trace", "no-trace")]
    )
    assert "cause" not in entries[0] and entries[1]["cause"] == "no-trace"
    rubric = Sample.model_validate(
        {"sample_id": "s", "prompt": "p", "rubric": {"q": {"criterion": "c", "weight": 1}}}
    )
    assert rubric_records(rubric, {"q": Reading.missing("x", "no-judge")})["q"]["cause"] == "no-judge"


def test_the_schema_lists_the_causes() -> None:
    schema = build_report_schema()
    entry = {
        "index": 0,
        "type": "contains",
        "layer": "fact",
        "weight": 1,
        "status": "missing",
        "message": "m",
    }
    validator = jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/assertionEntry"})
    assert validator.is_valid({**entry, "cause": "no-trace"})
    assert not validator.is_valid({**entry, "cause": "no trace"})


def _row(rubric: dict[str, Any], assertions: list[dict[str, Any]]) -> dict[str, Any]:
    scores = dict.fromkeys(("assertions", "composite", "fact", "behavior", "judge"))
    return {
        "scores": scores,
        "outcome": "passed",
        "modelCalls": {"live": 0, "replayed": 0},
        "execution": None,
        "rubric": rubric,
        "assertions": assertions,
    }


def test_summary_groups_by_cause_not_message() -> None:
    # Messages that the old text cutting would have kept apart (or merged) make no difference.
    rubric = {
        "a": {"status": "missing", "reason": "not scored: whatever (1)", "cause": "judge-reply"},
        "b": {
            "status": "missing",
            "reason": "judge reply: score 9 is outside the range 1-5",
            "cause": "judge-reply",
        },
        "c": {"status": "missing", "reason": "no judge configured (set ...)", "cause": "no-judge"},
    }
    assertions = [
        {"type": "tools_called", "status": "missing", "message": "no judge configured", "cause": "no-trace"},
        {"type": "faithfulness", "status": "missing", "message": "faithfulness: x", "cause": "judge-input"},
        {"type": "faithfulness", "status": "missing", "message": "from an older report"},
    ]
    totals = summarize([_row(rubric, assertions)])
    assert totals["judgeReadingsMissing"] == 5
    assert totals["judgeMissingReasons"] == {
        "unusable judge reply": 2,
        "no judge configured": 1,
        "nothing to judge against": 1,
        "cause not recorded": 1,
    }


def test_written_lines_flag_failures(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("", encoding="utf-8")
    targets = ReportTargets(
        json=None, html=tmp_path / "blocker" / "r.html", markdown=tmp_path / "s.md", step_summary=None
    )
    document = json.loads(json.dumps({"samples": [], "summary": summarize([])}))
    lines = write_reports(document, targets, [])
    assert [line.failed for line in lines] == [True, False]
    assert lines[0].line.startswith("omk: cannot write the HTML report")
