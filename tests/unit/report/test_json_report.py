"""The report's ``config`` and ``summary`` sections through their models: written as before, their
schema generated (not in the hand-written frame), and a value the schema would reject refused."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pydantic
import pytest

from pytest_omk.models.report_document import ReportConfig, ReportSummary
from pytest_omk.models.report_schema import FRAME, build_report_schema
from pytest_omk.report.json_report import build_document
from pytest_omk.report.terminal import summarize

SUMMARY: dict[str, Any] = {
    "samples": 2,
    "outcomes": {"failed": 1, "passed": 1},
    "means": {"assertions": 4.5, "composite": 4, "fact": None, "behavior": 5, "judge": None},
    "modelCalls": {"live": 1, "replayed": 3},
    "usage": {
        role: {
            "calls": n,
            "live": live,
            "replayed": n - live,
            "failed": 0,
            "inputTokens": None,
            "outputTokens": None,
            "costUSD": cost,
            "costUnknown": 0,
        }
        for role, n, live, cost in (("model", 2, 1, 0.002), ("judge", 2, 0, 0.001))
    },
    "costUSD": 0.003,
    "judgeReadingsMissing": 1,
    "judgeMissingReasons": {"no judge configured": 1},
}


def test_sections_are_written_as_given_key_order_and_ints_included() -> None:
    config = {"executor": "echo", "rubricThreshold": 3, "timeout": 30.0, "variants": {}, "shard": "1/2"}
    document = build_document([], SUMMARY, config)
    assert json.dumps(document["summary"]) == json.dumps(SUMMARY)
    # An older shard's config (fewer keys) is merged unchanged: no key is added.
    assert json.dumps(document["config"]) == json.dumps(config)


def test_the_empty_summary_matches_its_model() -> None:
    totals = summarize([])
    assert ReportSummary.model_validate(totals).model_dump(mode="json") == totals


@pytest.mark.parametrize(
    ("config", "summary"),
    [
        ({"recordMode": "sometimes"}, SUMMARY),
        ({"shard": "first"}, SUMMARY),
        ({}, {**SUMMARY, "outcomes": {"won": 1}}),
        ({}, {**SUMMARY, "judgeMissingReasons": {"x": 0}}),
    ],
)
def test_a_value_the_schema_rejects_is_refused(config: dict[str, Any], summary: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError):
        build_document([], summary, config)


def test_the_sections_schema_is_generated_and_agrees_with_the_models() -> None:
    frame = json.loads(FRAME.read_text(encoding="utf-8"))
    assert frame["properties"]["config"] == {"$ref": "#/$defs/config"}
    assert "config" not in frame["$defs"] and "summary" not in frame["$defs"]
    schema = build_report_schema()
    for name, value in (("summary", SUMMARY), ("config", ReportConfig().model_dump())):
        validator = jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"})
        assert validator.is_valid(value), name
    summary = jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/summary"})
    assert not summary.is_valid({**SUMMARY, "extra": 1})
    assert not summary.is_valid({k: v for k, v in SUMMARY.items() if k != "costUSD"})
