"""A sample's OpenTelemetry spans and evaluation events, built from its record (no SDK involved)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.models import Sample
from pytest_omk.report.otel import SpanSpec, sample_span
from pytest_omk.report.otel_events import CONTENT_CAP, EVALUATION_EVENT, TelemetryOptions
from pytest_omk.report.records import new_record

SAMPLE = Sample.model_validate(
    {
        "sample_id": "s1",
        "prompt": "Review the patch PROMPT-TEXT.",
        "assertions": [{"type": "contains", "value": "risk"}, {"type": "json_valid"}],
        "rubric": {"clarity": {"criterion": "clear", "weight": 1}},
    }
)
MS = 1_000_000


def record(**parts: Any) -> dict[str, Any]:
    wire = new_record(
        nodeid="e.json::s1",
        file="e.json",
        sample=SAMPLE,
        variant=None,
        executor="openai",
        model="m1",
        order=0,
    )
    wire.update(
        scores={"assertions": 3.0, "fact": 5.0, "behavior": None, "judge": 4.0, "composite": 4.5},
        assertions=[
            {"index": 0, "type": "contains", "layer": "fact", "weight": 1, "status": "pass", "message": "ok"},
            {
                "index": 1,
                "type": "json_valid",
                "layer": "fact",
                "weight": 1,
                "status": "fail",
                "message": "not JSON: 'OUTPUT-TEXT'",
            },
        ],
        rubric={"clarity": {"score": 4, "weight": 1, "reason": "REASON-TEXT", "status": "pass"}},
        execution={
            "output": "OUTPUT-TEXT sk-abcdefghijkl",
            "costUSD": 0.01,
            "latencyMs": 250,
            "inputTokens": 12,
            "outputTokens": 8,
            "numTurns": 1,
            "toolCalls": None,
            "replayed": True,
            "retries": 0,
            "stopReason": "length",
        },
    )
    wire["usage"]["model"].update(calls=1, replayed=1)
    wire["usage"]["judge"].update(calls=2, live=2, inputTokens=40, outputTokens=6, costUSD=0.002)
    wire.update(parts)
    return wire


def span(wire: dict[str, Any], outcome: str = "failed", **options: Any) -> SpanSpec:
    return sample_span(wire, outcome, 1_000 * MS, 2_000 * MS, TelemetryOptions(judge_model="jm", **options))


def events(spec: SpanSpec) -> dict[str, dict[str, Any]]:
    assert {event.name for event in spec.events} == {EVALUATION_EVENT}
    return {str(event.attributes["gen_ai.evaluation.name"]): event.attributes for event in spec.events}


def test_the_sample_span_names_the_sample_its_outcome_and_scores() -> None:
    spec = span(record())
    assert spec.name == "omk.sample s1" and spec.error and not spec.client
    attrs = spec.attributes
    assert attrs["test.case.name"] == "e.json::s1" and attrs["test.case.result.status"] == "fail"
    assert attrs["omk.outcome"] == "failed" and attrs["omk.executor"] == "openai"
    assert attrs["omk.score.composite"] == 4.5 and "omk.score.behavior" not in attrs
    assert (spec.start_ns, spec.end_ns) == (1_000 * MS, 2_000 * MS)
    skipped = span(record(), "skipped")
    assert "test.case.result.status" not in skipped.attributes and not skipped.error


def test_one_evaluation_event_per_assertion_dimension_and_present_layer() -> None:
    found = events(span(record()))
    assert sorted(found) == [
        "assertion 0: contains",
        "assertion 1: json_valid",
        "layer: assertions",
        "layer: composite",
        "layer: fact",
        "layer: judge",
        "rubric: clarity",
    ]
    assert found["assertion 0: contains"]["gen_ai.evaluation.score.value"] == 1.0
    assert found["assertion 1: json_valid"]["gen_ai.evaluation.score.label"] == "fail"
    assert found["assertion 1: json_valid"]["gen_ai.evaluation.score.value"] == 0.0
    assert found["rubric: clarity"]["gen_ai.evaluation.score.value"] == 4
    assert found["layer: judge"]["gen_ai.evaluation.score.value"] == 4.0


def test_missing_and_errored_readings_are_labelled_with_their_cause() -> None:
    wire = record(
        rubric={
            "clarity": {
                "score": None,
                "weight": 1,
                "reason": "judge down",
                "status": "missing",
                "cause": "judge-error",
            }
        }
    )
    wire["assertions"][1].update(status="missing", cause="no-trace", message="no trace")
    found = events(span(wire))
    assert found["rubric: clarity"]["gen_ai.evaluation.score.label"] == "error"
    assert found["rubric: clarity"]["error.type"] == "judge-error"
    assert "gen_ai.evaluation.score.value" not in found["rubric: clarity"]
    assert found["assertion 1: json_valid"]["gen_ai.evaluation.score.label"] == "missing"
    assert found["assertion 1: json_valid"]["error.type"] == "no-trace"


def test_the_calls_are_gen_ai_client_spans_within_the_sample() -> None:
    model, judge = span(record()).children
    assert model.name == "chat m1" and model.client
    assert model.attributes["gen_ai.operation.name"] == "chat"
    assert model.attributes["gen_ai.provider.name"] == "openai"
    assert model.attributes["gen_ai.usage.input_tokens"] == 12
    assert model.attributes["gen_ai.response.finish_reasons"] == ["length"]
    assert model.attributes["omk.replayed"] is True and model.attributes["omk.latency_ms"] == 250
    assert (model.start_ns, model.end_ns) == (1_000 * MS, 1_250 * MS)
    assert judge.name == "chat jm" and judge.attributes["omk.role"] == "judge"
    assert judge.attributes["omk.calls"] == 2 and judge.attributes["gen_ai.usage.input_tokens"] == 40
    assert judge.attributes["omk.replayed"] is False
    assert (judge.start_ns, judge.end_ns) == (1_250 * MS, 2_000 * MS)


def test_a_recorded_latency_longer_than_the_sample_ends_with_it() -> None:
    wire = record()
    wire["execution"]["latencyMs"] = 60_000
    assert span(wire).children[0].end_ns == 2_000 * MS


def test_no_call_spans_without_calls_and_a_failed_call_is_an_error() -> None:
    wire = record(execution=None)
    wire["usage"]["judge"].update(calls=0)
    wire["usage"]["model"].update(calls=0)
    assert span(wire, "error").children == ()
    wire["usage"]["model"].update(calls=1, live=1, failed=1)
    (failed,) = span(wire, "error").children
    assert failed.error and failed.attributes["error.type"] == "omk.call_failed"


@pytest.mark.parametrize("content", [False, True])
def test_content_only_when_asked(content: bool) -> None:
    spec = span(record(error="executor said OUTPUT-TEXT"), "error", content=content)
    texts = repr(spec)
    for mark in ("PROMPT-TEXT", "OUTPUT-TEXT", "REASON-TEXT"):
        assert (mark in texts) is content, mark
    found = events(spec)
    assert ("gen_ai.evaluation.explanation" in found["rubric: clarity"]) is content
    assert ("gen_ai.input.messages" in spec.children[0].attributes) is content
    assert spec.attributes["error.type"] == "omk.sample_error"


def test_every_string_goes_through_the_scrubber_content_or_not() -> None:
    def scrub(text: str) -> str:
        return text.replace("sk-abcdefghijkl", "[REDACTED]").replace("length", "[L]")

    spec = span(record(), content=True, scrub=scrub)
    model = spec.children[0]
    assert "sk-abcdefghijkl" not in repr(spec)
    assert "[REDACTED]" in str(model.attributes["gen_ai.output.messages"])
    assert model.attributes["gen_ai.response.finish_reasons"] == ["[L]"]  # arrays too


def test_an_ungraded_samples_reason_keeps_the_readings_message_for_content() -> None:
    wire = record(skipReason="nothing could be graded: the judge replied 'OUTPUT-TEXT'")
    assert span(wire, "skipped").attributes["omk.skip_reason"] == "nothing could be graded"
    full = span(wire, "skipped", content=True).attributes["omk.skip_reason"]
    assert full == "nothing could be graded: the judge replied 'OUTPUT-TEXT'"
    budget = record(skipReason="omk budget: $1.00 spent")
    assert span(budget, "skipped").attributes["omk.skip_reason"] == "omk budget: $1.00 spent"


def test_content_is_cut_after_scrubbing_so_no_half_secret_is_left() -> None:
    secret = "sk-abcdefghijkl"
    long = "x" * (CONTENT_CAP - 5) + secret + "y" * 100  # the secret straddles the cut

    def scrub(text: str) -> str:
        return text.replace(secret, "[REDACTED]")

    model = span(
        record(execution={**record()["execution"], "output": long}), content=True, scrub=scrub
    ).children[0]
    sent = str(model.attributes["gen_ai.output.messages"])
    assert "sk-abcde" not in sent and "[REDA" in sent
    assert f"cut here; the text has {CONTENT_CAP - 5 + len('[REDACTED]') + 100} characters" in sent


def test_the_agent_executors_answer_is_an_agent_invocation() -> None:
    model = span(record(executor="agent:anthropic")).children[0]
    assert model.name == "invoke_agent m1"
    assert model.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert model.attributes["gen_ai.provider.name"] == "anthropic"
    judge = span(record(executor="agent")).children[1]
    assert judge.attributes["gen_ai.operation.name"] == "chat"
