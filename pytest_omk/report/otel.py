"""One sample's OpenTelemetry spans, built from its record (no SDK here; the events: otel_events.py).

``--omk-otel`` (docs/telemetry.md) exports a span per sample, the model's and the judge's calls as
``gen_ai`` client spans below it, and a ``gen_ai.evaluation.result`` event per assertion, rubric
dimension and layer score on it. All of it is read from the sample's finished record, so the call
path needs no hooks: this module makes plain :class:`SpanSpec` values, ``plugin/otel.py`` hands
them to the SDK. Names follow the GenAI semantic conventions where they name the thing
(``gen_ai.*``, ``error.type``) and the test conventions for a result (``test.case.*``); the rest
is under ``omk.``. Prompts, outputs, judge reasons and failure messages (which quote the output)
are content, sent only with ``--omk-otel-content``; every string sent is scrubbed of secrets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pytest_omk.models.report import ExecutionRecord, SampleRecord
from pytest_omk.models.usage import RoleUsage
from pytest_omk.report.otel_events import (
    Attribute,
    EventSpec,
    TelemetryOptions,
    content_text,
    evaluation_events,
)

PROVIDERS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "agent:openai": "openai",
    "agent:anthropic": "anthropic",
}
"""``gen_ai.provider.name`` of the built-in HTTP executors (others are not a known provider)."""
AGENTS = frozenset({"agent", "agent:openai", "agent:anthropic"})
"""The built-in tool-using executor: its answer is an agent's run (``invoke_agent``), not one chat."""
UNGRADED = "nothing could be graded"
"""The start of the skip reason of a sample none of whose checks could be graded (plugin/subtests.py)."""
TEST_STATUS = {"passed": "pass", "xpassed": "pass", "failed": "fail", "error": "fail"}
"""``test.case.result.status`` by outcome (a skipped or xfailed sample has none)."""


@dataclass(frozen=True)
class SpanSpec:
    """One span to export: times in nanoseconds since the epoch, children below it."""

    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Attribute]
    client: bool = False
    """``SpanKind.CLIENT`` (a model call) rather than ``INTERNAL``."""
    error: bool = False
    """The span's status is ``ERROR`` (a failed or errored sample, a failed call)."""
    events: tuple[EventSpec, ...] = ()
    children: tuple[SpanSpec, ...] = ()


def sample_span(
    wire: dict[str, Any], outcome: str, start_ns: int, end_ns: int, options: TelemetryOptions
) -> SpanSpec:
    """The span of one sample (its record's wire form), with its call spans and evaluation events."""
    record = SampleRecord.of(wire)
    end_ns = max(end_ns, start_ns)
    model_end = _model_call_end(record.execution, start_ns, end_ns)
    children = [
        span
        for span in (
            _model_call(record, start_ns, model_end, options),
            _judge_calls(record.usage.judge, model_end, end_ns, options),
        )
        if span is not None
    ]
    return SpanSpec(
        name=f"omk.sample {record.sample_id}",
        start_ns=start_ns,
        end_ns=end_ns,
        attributes=_scrubbed(sample_attributes(record, outcome, options), options),
        error=outcome in ("failed", "error"),
        events=tuple(_scrubbed_event(event, options) for event in evaluation_events(record, options)),
        children=tuple(children),
    )


def sample_attributes(record: SampleRecord, outcome: str, options: TelemetryOptions) -> dict[str, Attribute]:
    """The sample span's attributes: which sample, its outcome, its scores."""
    attributes: dict[str, Attribute] = {
        "test.case.name": record.nodeid,
        "omk.nodeid": record.nodeid,
        "omk.file": record.file,
        "omk.sample_id": record.sample_id,
        "omk.outcome": outcome,
    }
    if (status := TEST_STATUS.get(outcome)) is not None:
        attributes["test.case.result.status"] = status
    optional = {
        "omk.variant": record.variant,
        "omk.executor": record.executor,
        "omk.model": record.model,
        "omk.skip_reason": _skip_reason(record.skipReason, options),
    }
    attributes.update({name: value for name, value in optional.items() if value})
    scores = record.scores.model_dump().items()
    attributes.update({f"omk.score.{layer}": value for layer, value in scores if value is not None})
    if record.carried:
        attributes["omk.carried"] = True
    if outcome == "error":
        attributes["error.type"] = "omk.sample_error"
        if options.content and record.error:
            attributes["omk.error"] = content_text(record.error, options)  # it may quote the answer
    return attributes


def _skip_reason(reason: str | None, options: TelemetryOptions) -> str | None:
    """Why the sample was skipped; "nothing could be graded" without the reading's message (it may
    quote a judge's reply) unless content is on."""
    if reason is None or options.content or not reason.startswith(UNGRADED):
        return reason
    return UNGRADED


def _model_call_end(execution: ExecutionRecord | None, start_ns: int, end_ns: int) -> int:
    """Where the model call's span ends: its latency after the sample's start, within the sample
    (a replayed call's recorded latency may be longer than the replay took)."""
    if execution is None or execution.latencyMs is None:
        return start_ns
    return min(start_ns + int(execution.latencyMs * 1_000_000), end_ns)


def _model_call(
    record: SampleRecord, start_ns: int, end_ns: int, options: TelemetryOptions
) -> SpanSpec | None:
    """The model under test's call: what the executor reported (the first run's, when repeated)."""
    usage, execution = record.usage.model, record.execution
    if execution is None and not usage.calls:
        return None
    operation = "invoke_agent" if record.executor in AGENTS else "chat"
    attributes = _call_attributes("model", record.model, usage, operation)
    if (provider := PROVIDERS.get(record.executor or "")) is not None:
        attributes["gen_ai.provider.name"] = provider
    if execution is not None:
        tokens = {
            "gen_ai.usage.input_tokens": execution.inputTokens,
            "gen_ai.usage.output_tokens": execution.outputTokens,
        }
        attributes.update({name: value for name, value in tokens.items() if value is not None})
        if execution.costUSD is not None:
            attributes["omk.cost_usd"] = execution.costUSD
        if execution.latencyMs is not None:
            attributes["omk.latency_ms"] = execution.latencyMs
        if execution.stopReason is not None:
            attributes["gen_ai.response.finish_reasons"] = [execution.stopReason]
        attributes["omk.replayed"] = execution.replayed
        attributes["omk.retries"] = execution.retries
        if options.content:
            attributes.update(_content(record.prompt, execution, options))
    failed = usage.failed > 0 and execution is None
    if failed:
        attributes["error.type"] = "omk.call_failed"
    span = SpanSpec(
        _call_name(operation, record.model), start_ns, end_ns, attributes, client=True, error=failed
    )
    return _scrubbed_span(span, options)


def _judge_calls(usage: RoleUsage, start_ns: int, end_ns: int, options: TelemetryOptions) -> SpanSpec | None:
    """The judge's calls for the sample, as one span (the record keeps their sums, not each call)."""
    if not usage.calls:
        return None
    attributes = _call_attributes("judge", options.judge_model, usage, "chat")
    tokens = {
        "gen_ai.usage.input_tokens": usage.inputTokens,
        "gen_ai.usage.output_tokens": usage.outputTokens,
    }
    attributes.update({name: value for name, value in tokens.items() if value is not None})
    if usage.costUSD is not None:
        attributes["omk.cost_usd"] = usage.costUSD
    attributes["omk.replayed"] = usage.replayed == usage.calls
    if usage.failed:
        attributes["error.type"] = "omk.call_failed"
    span = SpanSpec(
        _call_name("chat", options.judge_model),
        start_ns,
        end_ns,
        attributes,
        client=True,
        error=bool(usage.failed),
    )
    return _scrubbed_span(span, options)


def _call_attributes(role: str, model: str | None, usage: RoleUsage, operation: str) -> dict[str, Attribute]:
    attributes: dict[str, Attribute] = {
        "gen_ai.operation.name": operation,
        "omk.role": role,
        "omk.calls": usage.calls,
        "omk.calls.live": usage.live,
        "omk.calls.replayed": usage.replayed,
        "omk.calls.failed": usage.failed,
    }
    if model:
        attributes["gen_ai.request.model"] = model
    return attributes


def _call_name(operation: str, model: str | None) -> str:
    """``{gen_ai.operation.name} {gen_ai.request.model}``, as the conventions name a call's span."""
    return f"{operation} {model}" if model else operation


def _content(
    prompt: str | None, execution: ExecutionRecord, options: TelemetryOptions
) -> dict[str, Attribute]:
    """The prompt and the answer, in the conventions' message shape (``--omk-otel-content``)."""
    answer = content_text(execution.output, options)
    output: dict[str, Any] = {"role": "assistant", "parts": [{"type": "text", "content": answer}]}
    if execution.stopReason is not None:
        output["finish_reason"] = execution.stopReason
    content: dict[str, Attribute] = {"gen_ai.output.messages": json.dumps([output], ensure_ascii=False)}
    if prompt is not None:
        message = {"role": "user", "parts": [{"type": "text", "content": content_text(prompt, options)}]}
        content["gen_ai.input.messages"] = json.dumps([message], ensure_ascii=False)
    return content


def _scrubbed(attributes: dict[str, Attribute], options: TelemetryOptions) -> dict[str, Attribute]:
    """Every string (and string in an array) through the scrubber: secrets never leave the machine."""
    scrub = options.scrub
    return {
        name: scrub(value)
        if isinstance(value, str)
        else [scrub(item) for item in value]
        if isinstance(value, list | tuple)
        else value
        for name, value in attributes.items()
    }


def _scrubbed_event(event: EventSpec, options: TelemetryOptions) -> EventSpec:
    return EventSpec(event.name, _scrubbed(event.attributes, options))


def _scrubbed_span(span: SpanSpec, options: TelemetryOptions) -> SpanSpec:
    return SpanSpec(
        span.name, span.start_ns, span.end_ns, _scrubbed(span.attributes, options), span.client, span.error
    )
