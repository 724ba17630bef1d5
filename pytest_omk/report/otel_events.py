"""The ``gen_ai.evaluation.result`` events of one sample, built from its record (no SDK here).

One event per top-level assertion, rubric dimension and layer score the sample has, on its span
(:mod:`pytest_omk.report.otel`), with the GenAI semantic conventions' attributes:
``gen_ai.evaluation.name``, ``.score.value``, ``.score.label`` (``pass``, ``fail``, ``missing`` or
``error``), ``.explanation`` (content: only with ``--omk-otel-content``) and ``error.type`` (the
reading's cause). See docs/telemetry.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pytest_omk.models.report import AssertionEntry, RubricEntry, SampleRecord

Attribute = str | bool | int | float | Sequence[str]
"""An attribute value OpenTelemetry accepts (a string array for the finish reasons)."""

EVALUATION_EVENT = "gen_ai.evaluation.result"
CONTENT_CAP = 16_384
"""Most characters of one piece of content sent (a prompt, an answer, a reason): backends limit an
attribute's size, and an export request over the exporter's limit is dropped whole."""
ERROR_CAUSES = frozenset({"judge-error", "check-error"})
"""Causes whose reading is labelled ``error`` (the check or the judge failed), not ``missing``."""


@dataclass(frozen=True)
class EventSpec:
    """One span event: its name and attributes."""

    name: str
    attributes: dict[str, Attribute]


@dataclass(frozen=True)
class TelemetryOptions:
    """What the spans may say: content or not, the judge's model, how strings are scrubbed."""

    content: bool = False
    judge_model: str | None = None
    scrub: Callable[[str], str] = field(default=lambda text: text)


def evaluation_events(record: SampleRecord, options: TelemetryOptions) -> list[EventSpec]:
    """One ``gen_ai.evaluation.result`` per assertion, rubric dimension and present layer score."""
    events = [_assertion_event(entry, options) for entry in record.assertions]
    events += [_rubric_event(name, entry, options) for name, entry in record.rubric.items()]
    events += [
        EventSpec(
            EVALUATION_EVENT,
            {"gen_ai.evaluation.name": f"layer: {layer}", "gen_ai.evaluation.score.value": value},
        )
        for layer, value in record.scores.model_dump().items()
        if value is not None
    ]
    return events


def label(status: str, cause: str | None) -> str:
    """``gen_ai.evaluation.score.label``: ``pass``, ``fail``, ``missing`` or ``error``."""
    if status == "missing" and cause in ERROR_CAUSES:
        return "error"
    return status


def _assertion_event(entry: AssertionEntry, options: TelemetryOptions) -> EventSpec:
    attributes: dict[str, Attribute] = {
        "gen_ai.evaluation.name": f"assertion {entry.index}: {entry.type}",
        "gen_ai.evaluation.score.label": label(entry.status, entry.cause),
        "omk.assertion.index": entry.index,
        "omk.assertion.type": entry.type,
        "omk.assertion.weight": entry.weight,
    }
    if entry.status != "missing":
        attributes["gen_ai.evaluation.score.value"] = 1.0 if entry.status == "pass" else 0.0
    if entry.layer is not None:
        attributes["omk.assertion.layer"] = entry.layer
    return EventSpec(EVALUATION_EVENT, _with_reason(attributes, entry.message, entry.cause, options))


def _rubric_event(name: str, entry: RubricEntry, options: TelemetryOptions) -> EventSpec:
    attributes: dict[str, Attribute] = {
        "gen_ai.evaluation.name": f"rubric: {name}",
        "gen_ai.evaluation.score.label": label(entry.status, entry.cause),
        "omk.rubric.weight": entry.weight,
    }
    if entry.score is not None:
        attributes["gen_ai.evaluation.score.value"] = entry.score
    return EventSpec(EVALUATION_EVENT, _with_reason(attributes, entry.reason, entry.cause, options))


def _with_reason(
    attributes: dict[str, Attribute], reason: str, cause: str | None, options: TelemetryOptions
) -> dict[str, Attribute]:
    # The cause is a code (``judge-error``); the message quotes the answer, so it is content.
    if cause is not None:
        attributes["error.type"] = cause
    if options.content and reason:
        attributes["gen_ai.evaluation.explanation"] = content_text(reason, options)
    return attributes


def content_text(text: str, options: TelemetryOptions) -> str:
    """A piece of content as sent: scrubbed first (a cut must not leave half a secret), then cut to
    :data:`CONTENT_CAP` characters with a note of its length."""
    text = options.scrub(text)
    if len(text) <= CONTENT_CAP:
        return text
    return f"{text[:CONTENT_CAP]} [pytest-omk: cut here; the text has {len(text)} characters]"
