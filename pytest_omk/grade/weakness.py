"""``--omk-mutate``: grade mutants of a sample's output with its deterministic checks, no model call.

A mutant is *caught* when at least one top-level check fails on it. Checks the judge grades
(``llm-rubric`` and the other LLM-scored types) cannot be read without a model call: on a mutant
they have no reading (missing), so they never catch it; checks of the trace (tools, turns, cost,
latency) see the real run's trace, which no mutant changes. A sample is assessed only when its
real output passes every deterministic check it has: otherwise there is no right answer to break.
It is *weak* when it was assessed and caught no mutant: its checks would pass a wrong answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_omk.grade.base import GradeContext
from pytest_omk.grade.mutants import mutants
from pytest_omk.grade.registry import grade_sample
from pytest_omk.models import Sample
from pytest_omk.models.results import ExecutionResult, Reading

if TYPE_CHECKING:
    from pytest_omk.js.v8 import JsEngine


def _failed(sample: Sample, base_dir: Path, execution: ExecutionResult, js: JsEngine) -> list[int]:
    """Indexes of the top-level checks that fail on ``execution`` (judge readings left out)."""
    ctx = GradeContext(execution=execution, sample=sample, base_dir=base_dir, judge_readings={}, js=js)
    readings: list[Reading] = grade_sample(list(sample.assertions or []), ctx)
    return [index for index, reading in enumerate(readings) if reading.status == "fail"]


def assess(
    sample: Sample, base_dir: Path, execution: ExecutionResult, js: JsEngine, *, seed: int = 0
) -> dict[str, Any]:
    """The record's ``mutation`` section for one sample's output."""
    if not sample.assertions or _failed(sample, base_dir, execution, js):
        return {"assessed": False, "mutants": 0, "caught": 0, "weak": False, "results": []}
    results: list[dict[str, Any]] = []
    for mutant in mutants(execution.output, sample_id=sample.sample_id, seed=seed):
        if mutant.text is None:
            results.append({"operator": mutant.operator, "applied": False, "caught": False, "failed": []})
            continue
        failed = _failed(sample, base_dir, execution.model_copy(update={"output": mutant.text}), js)
        results.append(
            {"operator": mutant.operator, "applied": True, "caught": bool(failed), "failed": failed}
        )
    applied = [r for r in results if r["applied"]]
    caught = sum(1 for r in applied if r["caught"])
    return {
        "assessed": True,
        "mutants": len(applied),
        "caught": caught,
        "weak": caught == 0,
        "results": results,
    }
