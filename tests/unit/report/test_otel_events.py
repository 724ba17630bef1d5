"""The evaluation events of a sample: one per check and present layer score, labelled by status and cause."""

from __future__ import annotations

from pytest_omk.models import Sample
from pytest_omk.models.report import SampleRecord
from pytest_omk.report.otel_events import EVALUATION_EVENT, TelemetryOptions, evaluation_events, label

SAMPLE = Sample.model_validate(
    {"sample_id": "s", "prompt": "p", "assertions": [{"type": "contains", "value": "x"}]}
)


def _record(status: str, cause: str | None = None) -> SampleRecord:
    entry = {
        "index": 0,
        "type": "contains",
        "layer": "fact",
        "weight": 1,
        "status": status,
        "message": "seen 'y'",
    }
    if cause is not None:
        entry["cause"] = cause
    return SampleRecord.model_validate(
        {
            "nodeid": "f::s",
            "file": "f",
            "sample_id": "s",
            "assertions": [entry],
            "scores": {"fact": 1, "composite": 1},
        }
    )


def test_labels_say_pass_fail_missing_or_error() -> None:
    assert label("pass", None) == "pass" and label("fail", None) == "fail"
    assert label("missing", "no-trace") == "missing" and label("missing", None) == "missing"
    assert label("missing", "check-error") == "error" and label("missing", "judge-error") == "error"


def test_an_event_per_check_and_present_layer_without_content_by_default() -> None:
    events = evaluation_events(_record("fail"), TelemetryOptions())
    assert [event.name for event in events] == [EVALUATION_EVENT] * 3
    names = [event.attributes["gen_ai.evaluation.name"] for event in events]
    assert names == ["assertion 0: contains", "layer: fact", "layer: composite"]
    check = events[0].attributes
    assert check["gen_ai.evaluation.score.value"] == 0.0 and "gen_ai.evaluation.explanation" not in check
    with_content = evaluation_events(_record("fail"), TelemetryOptions(content=True))[0].attributes
    assert with_content["gen_ai.evaluation.explanation"] == "seen 'y'"


def test_a_missing_reading_has_no_value_and_its_cause_as_error_type() -> None:
    check = evaluation_events(_record("missing", "check-error"), TelemetryOptions())[0].attributes
    assert "gen_ai.evaluation.score.value" not in check
    assert check["gen_ai.evaluation.score.label"] == "error" and check["error.type"] == "check-error"
