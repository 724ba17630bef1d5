"""Build the per-sample record (:class:`~pytest_omk.models.report.SampleRecord`) and its JUnit properties.

Records travel from xdist workers to the controller as an attribute of pytest's reports, so
on an item they are held in their wire form (:meth:`SampleRecord.wire`, plain JSON values). The
graded parts are built as those JSON values directly, key for key what their models would write
(``tests/unit/report/test_records.py`` holds each part to its model): building and dumping a model
per check was a twentieth of a large replay.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pytest_omk._util.stored_text import cap_strings, cap_text
from pytest_omk.grade.scoring import LAYERS
from pytest_omk.models import AssertionBase, Sample
from pytest_omk.models.accounting import ROLES
from pytest_omk.models.assertions import assertion_layer
from pytest_omk.models.report import ExecutionRecord, SampleRecord
from pytest_omk.models.results import ExecutionResult, Reading
from pytest_omk.models.run import SampleRun
from pytest_omk.report.calls_record import no_calls
from pytest_omk.report.summary_parts import summary_properties


def metadata_of(sample: Sample) -> dict[str, Any]:
    """The sample's metadata fields (never used for grading)."""
    data = sample.model_dump(
        by_alias=True,
        include={"capability", "difficulty", "construct_", "provenance", "tripwire", "covers"},
        exclude_none=True,
    )
    return data


def execution_record(
    execution: ExecutionResult | None, mask: Callable[[str], str] | None = None
) -> dict[str, Any] | None:
    """The execution part of a record (the optional counts only when the executor reported them).

    Texts are stored up to the cap of :mod:`pytest_omk._util.stored_text` (grading has read them
    whole already): the output, and the tool calls' inputs and outputs; a text that is cut is
    masked whole first (``mask``, the run's secret masking).
    """
    if execution is None:
        return None
    record: dict[str, Any] = {
        "output": cap_text(execution.output, mask=mask),
        "costUSD": execution.costUSD,
        "latencyMs": execution.latencyMs,
        "inputTokens": execution.inputTokens,
        "outputTokens": execution.outputTokens,
        "numTurns": execution.numTurns,
    }
    for key in ExecutionRecord.OPTIONAL_KEYS:
        if (value := getattr(execution, key)) is not None:
            record[key] = value
    calls = execution.toolCalls
    record["toolCalls"] = (
        None
        if calls is None
        else [cap_strings(c.model_dump(mode="json", exclude_none=True), mask=mask) for c in calls]
    )
    record["replayed"] = execution.replayed
    record["retries"] = execution.retries
    return record


def assertion_records(
    assertions: Sequence[AssertionBase], readings: Sequence[Reading]
) -> list[dict[str, Any]]:
    """One entry per top-level assertion."""
    return [
        _with_cause(
            {
                "index": index,
                "type": assertion.type,  # type: ignore[attr-defined]
                "layer": assertion_layer(assertion),
                "weight": assertion.weight,
                "status": reading.status,
                "message": reading.message,
            },
            reading,
        )
        for index, (assertion, reading) in enumerate(zip(assertions, readings, strict=True))
    ]


def rubric_records(sample: Sample, readings: dict[str, Reading]) -> dict[str, dict[str, Any]]:
    """One entry per rubric dimension (with each judge replicate's score under ``--omk-judge-repeat``)."""
    entries = {
        name: _with_cause(
            {
                "score": readings[name].score,
                "weight": dim.weight,
                "reason": readings[name].message,
                "status": readings[name].status,
            },
            readings[name],
        )
        for name, dim in (sample.rubric or {}).items()
    }
    for name, entry in entries.items():
        if readings[name].replicates:
            entry["judgeReadings"] = list(readings[name].replicates)
    return entries


def _with_cause(entry: dict[str, Any], reading: Reading) -> dict[str, Any]:
    # Set only when there is one (an optional key), so a passing or failing entry keeps its keys.
    if reading.cause is not None:
        entry["cause"] = reading.cause
    return entry


def _fmt(value: float) -> str:
    return f"{value:.2f}"


def junit_properties(wire: dict[str, Any]) -> list[tuple[str, str]]:
    """The per-testcase JUnit properties of a record (string values only)."""
    record = SampleRecord.of(wire)
    props: list[tuple[str, str]] = [("omk.sample_id", record.sample_id), ("omk.file", record.file)]
    if record.variant:
        props.append(("omk.variant", record.variant))
    for layer, value in record.scores.model_dump().items():
        if value is not None:
            props.append((f"omk.score.{layer}", _fmt(value)))
    repeats = record.repeats
    if repeats:
        props += [
            ("omk.repeat.n", str(repeats.n)),
            ("omk.repeat.pass_rate", f"{repeats.passRate:.2f}"),
            ("omk.repeat.pass_all", "true" if repeats.passAll else "false"),
        ]
        props += [
            (f"omk.score.{layer}.sd", f"{sd:.3f}")
            for layer in LAYERS
            if (sd := getattr(repeats, layer).sd) is not None
        ]
    props += [(f"omk.assertion.{entry.index}.{entry.type}", entry.status) for entry in record.assertions]
    for name, dim in record.rubric.items():
        props.append((f"omk.rubric.{name}", "missing" if dim.score is None else f"{dim.score:g}"))
    props.append(("omk.executor", record.executor or ""))
    if record.model:
        props.append(("omk.model", record.model))
    return props + _execution_properties(record.execution) + _usage_properties(record)


def _usage_properties(record: SampleRecord) -> list[tuple[str, str]]:
    """``omk.<role>.calls|input_tokens|output_tokens|cost_usd`` of each role that made calls."""
    props = []
    for role in ROLES:
        part = getattr(record.usage, role)
        if not part.calls and part.costUSD is None and part.inputTokens is None and part.outputTokens is None:
            continue  # nothing to say (an app under test that made no call and reported nothing)
        props.append((f"omk.{role}.calls", str(part.calls)))
        for name, value in (("input_tokens", part.inputTokens), ("output_tokens", part.outputTokens)):
            if value is not None:
                props.append((f"omk.{role}.{name}", str(value)))
        if part.costUSD is not None:
            props.append((f"omk.{role}.cost_usd", f"{part.costUSD:.6f}"))
    return props


def _execution_properties(execution: ExecutionRecord | None) -> list[tuple[str, str]]:
    if not execution:
        return []
    props = []
    if execution.costUSD is not None:
        props.append(("omk.cost_usd", f"{execution.costUSD:.6f}"))
    if execution.latencyMs is not None:
        props.append(("omk.latency_ms", f"{execution.latencyMs:.0f}"))
    props.append(("omk.replayed", "true" if execution.replayed else "false"))
    if execution.stopReason is not None:
        props.append(("omk.stop_reason", execution.stopReason))
    if execution.endpoint is not None:
        props.append(("omk.endpoint", execution.endpoint))
    return props


def judge_provenance(runs: Sequence[SampleRun]) -> dict[str, Any]:
    """The record's judge keys, only when there is something to say: the structured output a
    judge endpoint refused (``judgeFormatRefused``), and where the judge was the model under test
    (``judgeSameModel``)."""
    parts: dict[str, Any] = {}
    refused = {
        endpoint: refusal.model_dump(mode="json")
        for run in runs
        for endpoint, refusal in run.judge.refused_formats.items()
    }
    if refused:
        parts["judgeFormatRefused"] = refused
    same = next((run.judge.same_model for run in runs if run.judge.same_model), None)
    if same:
        parts["judgeSameModel"] = same
    probe = next((run.judge.probe for run in runs if run.judge.probe), None)
    if probe:  # --omk-judge-probe (the first run's, as for the execution)
        parts["judgeProbe"] = dict(probe)
    return parts


def new_record(
    *,
    nodeid: str,
    file: str,
    sample: Sample,
    variant: str | None,
    executor: str | None,
    model: str | None,
    order: int,
    line: int | None = None,
) -> dict[str, Any]:
    """A sample's record (wire form) before anything ran: errors and skips are reported with it too.

    Built as JSON values, in :class:`SampleRecord`'s key order, as :meth:`SampleRecord.wire` writes
    it (``tests/unit/report/test_records.py`` compares the two).
    """
    return {
        "nodeid": nodeid,
        "file": file,
        "sample_id": sample.sample_id,
        "line": line,
        "prompt": sample.prompt,
        "variant": variant,
        "outcome": None,
        "executor": executor,
        "model": model,
        "scores": dict.fromkeys(LAYERS),
        "assertions": [],
        "rubric": {},
        "execution": None,
        "metadata": metadata_of(sample),
        "modelCalls": {"live": 0, "replayed": 0},
        "usage": no_calls(),
        "urls": [],
        "error": None,
        "judgeRecordingsIgnored": False,
        "repeats": None,
        "skipReason": None,
        "inputDigest": None,
        "carried": False,
        "mutation": None,
        "order": order,
    }


def suite_properties(totals: dict[str, Any]) -> list[tuple[str, str]]:
    """The JUnit suite's properties: samples, layer means, the run's cost (the judge's included),
    each role's calls and cost, and what the run saved or spent (budget, repeats, carried)."""
    props = [("omk.samples", str(totals["samples"]))]
    props += [
        (f"omk.score.{layer}.mean", f"{value:.2f}")
        for layer, value in totals["means"].items()
        if value is not None
    ]
    if totals["costUSD"] is not None:
        props.append(("omk.cost_usd.total", f"{totals['costUSD']:.6f}"))
    props += summary_properties(totals)
    for role, part in totals["usage"].items():
        if part["calls"] or part["costUSD"] is not None:  # an app under test may report only a cost
            props.append((f"omk.{role}.calls.total", str(part["calls"])))
        if part["costUSD"] is not None:
            props.append((f"omk.{role}.cost_usd.total", f"{part['costUSD']:.6f}"))
    return props
