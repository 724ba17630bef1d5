"""Graders for execution telemetry: ``cost_max`` (USD) and ``latency_max`` (milliseconds).

An executor that does not report a cost or a latency gives no evidence either way, so the reading
is missing (left out of the scores), never a failure and never a pass.
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_omk.grade._table import entry
from pytest_omk.grade.base import GradeContext, Grader
from pytest_omk.jstext import js_number
from pytest_omk.models import AssertionBase
from pytest_omk.models.assertions import CostMax, LatencyMax
from pytest_omk.models.results import Reading


def _at_most(
    measured: float | None, limit: float, *, name: str, verb: str, show: Callable[[float], str], missing: str
) -> Reading:
    """``measured <= limit`` as a reading: ``missing`` when nothing was measured."""
    if measured is None:
        return Reading.missing(missing)
    if measured <= limit:
        return Reading.passed(f"{name} {show(measured)} (at most {show(limit)})")
    return Reading.failed(f"expected a {name} of at most {show(limit)}; the call {verb} {show(measured)}")


def _cost_max(a: CostMax, ctx: GradeContext) -> Reading:
    return _at_most(
        ctx.execution.costUSD,
        a.value,
        name="cost",
        verb="cost",
        show=lambda usd: f"${js_number(usd)}",
        missing="the executor reported no cost (costUSD)",
    )


def _latency_max(a: LatencyMax, ctx: GradeContext) -> Reading:
    return _at_most(
        ctx.execution.latencyMs,
        a.value,
        name="latency",
        verb="took",
        show=lambda ms: f"{js_number(ms)} ms",
        missing="no latency was measured for this call (latencyMs)",
    )


GRADERS: dict[type[AssertionBase], Grader] = dict(
    [
        entry(CostMax, _cost_max),
        entry(LatencyMax, _latency_max),
    ]
)
"""Telemetry graders, keyed by assertion class."""
