"""Helpers for the grading tests: build samples through the real models and grade them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_omk.grade.base import GradeContext
from pytest_omk.grade.registry import grade_sample
from pytest_omk.js.v8 import JsEngine
from pytest_omk.models import Sample
from pytest_omk.models.results import ExecutionResult, Reading

ENGINE = JsEngine()
"""One V8 engine for the grading tests of this process, as the session keeps one per worker."""


def make_sample(*assertions: Mapping[str, Any], **fields: Any) -> Sample:
    """A validated sample carrying ``assertions`` (plus any other sample fields)."""
    return Sample.model_validate(
        {"sample_id": "s1", "prompt": "Do the task", "assertions": list(assertions), **fields}
    )


def make_ctx(
    sample: Sample,
    output: str = "",
    *,
    base_dir: Path | None = None,
    judge_readings: Mapping[int, Reading] | None = None,
    custom_timeout: float = 30.0,
    js: JsEngine | None = None,
    **execution: Any,
) -> GradeContext:
    """A grading context for ``sample`` with the given output and execution fields."""
    return GradeContext(
        execution=ExecutionResult.model_validate({"output": output, **execution}),
        sample=sample,
        base_dir=base_dir or Path.cwd(),
        judge_readings=dict(judge_readings or {}),
        custom_timeout=custom_timeout,
        js=js or ENGINE,
    )


def read_all(
    assertions: Sequence[Mapping[str, Any]],
    output: str = "",
    *,
    sample_fields: Mapping[str, Any] | None = None,
    **ctx: Any,
) -> list[Reading]:
    """Grade several assertions on one output."""
    sample = make_sample(*assertions, **(sample_fields or {}))
    return grade_sample(sample.assertions or [], make_ctx(sample, output, **ctx))


def read(
    assertion: Mapping[str, Any],
    output: str = "",
    *,
    sample_fields: Mapping[str, Any] | None = None,
    **ctx: Any,
) -> Reading:
    """Grade one assertion on ``output``."""
    return read_all([assertion], output, sample_fields=sample_fields, **ctx)[0]


def status(assertion: Mapping[str, Any], output: str = "", **ctx: Any) -> str:
    """The status (pass/fail/missing) of one assertion on ``output``."""
    return read(assertion, output, **ctx).status
