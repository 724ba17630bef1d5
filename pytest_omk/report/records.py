"""The per-sample record: one JSON-safe dict shared by JUnit, the terminal and the JSON report.

Records travel from xdist workers to the controller as an attribute of pytest's reports, so
they hold only plain JSON values (strings, numbers, lists, dicts, ``None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_omk.grade.scoring import LAYERS
from pytest_omk.models import AssertionBase, Sample
from pytest_omk.models.assertions import assertion_layer
from pytest_omk.models.results import ExecutionResult, Reading
from pytest_omk.models.run import SampleRun


def metadata_of(sample: Sample) -> dict[str, Any]:
    """The sample's metadata fields (never used for grading)."""
    data = sample.model_dump(
        by_alias=True,
        include={"capability", "difficulty", "construct_", "provenance", "tripwire", "covers"},
        exclude_none=True,
    )
    return data


def execution_record(execution: ExecutionResult | None) -> dict[str, Any] | None:
    """The execution part of a record."""
    if execution is None:
        return None
    return {
        "output": execution.output,
        "costUSD": execution.costUSD,
        "latencyMs": execution.latencyMs,
        "inputTokens": execution.inputTokens,
        "outputTokens": execution.outputTokens,
        "numTurns": execution.numTurns,
        **{
            key: value
            for key in ("cacheReadTokens", "cacheCreationTokens", "fullNumTurns", "numSubAgents")
            if (value := getattr(execution, key)) is not None
        },
        "toolCalls": [c.model_dump(exclude_none=True) for c in execution.toolCalls]
        if execution.toolCalls is not None
        else None,
        "replayed": execution.replayed,
        "retries": execution.retries,
    }


def assertion_records(assertions: Sequence[AssertionBase], readings: Sequence[Reading]) -> list[dict[str, Any]]:
    """One entry per top-level assertion."""
    return [
        {
            "index": index,
            "type": assertion.type,  # type: ignore[attr-defined]
            "layer": assertion_layer(assertion),
            "weight": assertion.weight,
            "status": reading.status,
            "message": reading.message,
        }
        for index, (assertion, reading) in enumerate(zip(assertions, readings, strict=True))
    ]


def rubric_records(sample: Sample, readings: dict[str, Reading]) -> dict[str, dict[str, Any]]:
    """One entry per rubric dimension."""
    return {
        name: {
            "score": readings[name].score,
            "weight": dim.weight,
            "reason": readings[name].message,
            "status": readings[name].status,
        }
        for name, dim in (sample.rubric or {}).items()
    }


def _fmt(value: float) -> str:
    return f"{value:.2f}"


def junit_properties(record: dict[str, Any]) -> list[tuple[str, str]]:
    """The per-testcase JUnit properties of a record (string values only)."""
    props: list[tuple[str, str]] = [("omk.sample_id", record["sample_id"]), ("omk.file", record["file"])]
    if record.get("variant"):
        props.append(("omk.variant", record["variant"]))
    for layer, value in record["scores"].items():
        if value is not None:
            props.append((f"omk.score.{layer}", _fmt(value)))
    repeats = record.get("repeats")
    if repeats:
        props += [
            ("omk.repeat.n", str(repeats["n"])),
            ("omk.repeat.pass_rate", f"{repeats['passRate']:.2f}"),
            ("omk.repeat.pass_all", "true" if repeats["passAll"] else "false"),
        ]
        props += [
            (f"omk.score.{layer}.sd", f"{repeats[layer]['sd']:.3f}")
            for layer in LAYERS
            if repeats.get(layer, {}).get("sd") is not None
        ]
    for entry in record["assertions"]:
        props.append((f"omk.assertion.{entry['index']}.{entry['type']}", entry["status"]))
    for name, entry in record["rubric"].items():
        score = entry["score"]
        props.append((f"omk.rubric.{name}", "missing" if score is None else f"{score:g}"))
    props.append(("omk.executor", record.get("executor") or ""))
    if record.get("model"):
        props.append(("omk.model", record["model"]))
    execution = record.get("execution")
    if execution:
        if execution["costUSD"] is not None:
            props.append(("omk.cost_usd", f"{execution['costUSD']:.6f}"))
        if execution["latencyMs"] is not None:
            props.append(("omk.latency_ms", f"{execution['latencyMs']:.0f}"))
        props.append(("omk.replayed", "true" if execution["replayed"] else "false"))
    return props


def model_calls(run: SampleRun) -> dict[str, int]:
    """Live and replayed model calls (executor and judge) of one run."""
    return {
        "live": int(not run.execution.replayed) + run.judge.calls - run.judge.replayed,
        "replayed": int(run.execution.replayed) + run.judge.replayed,
    }


def new_record(
    *, nodeid: str, file: str, sample: Sample, variant: str | None, executor: str | None, model: str | None, order: int
) -> dict[str, Any]:
    """A sample's record before anything ran: errors and skips are reported with it too."""
    return {
        "nodeid": nodeid,
        "file": file,
        "sample_id": sample.sample_id,
        "prompt": sample.prompt,
        "variant": variant,
        "repeats": None,
        "executor": executor,
        "model": model,
        "scores": dict.fromkeys(LAYERS),
        "assertions": [],
        "rubric": {},
        "execution": None,
        "urls": [],
        "metadata": metadata_of(sample),
        "modelCalls": {"live": 0, "replayed": 0},
        "order": order,
    }
