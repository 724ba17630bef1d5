"""Graders for execution telemetry: ``cost_max`` (USD) and ``latency_max`` (milliseconds).

An executor that does not report a cost or a latency gives no evidence either way, so the reading
is missing (left out of the scores), never a failure and never a pass.
"""

from __future__ import annotations

from pytest_omk.grade._table import entry
from pytest_omk.grade.base import GradeContext, Grader
from pytest_omk.jstext import js_number
from pytest_omk.models import AssertionBase
from pytest_omk.models.assertions import CostMax, LatencyMax
from pytest_omk.models.results import Reading


def _cost_max(a: CostMax, ctx: GradeContext) -> Reading:
    cost = ctx.execution.costUSD
    if cost is None:
        return Reading.missing("the executor reported no cost (costUSD)")
    if cost <= a.value:
        return Reading.passed(f"cost ${js_number(cost)} (at most ${js_number(a.value)})")
    return Reading.failed(
        f"expected a cost of at most ${js_number(a.value)}; the call cost ${js_number(cost)}"
    )


def _latency_max(a: LatencyMax, ctx: GradeContext) -> Reading:
    latency = ctx.execution.latencyMs
    if latency is None:
        return Reading.missing("no latency was measured for this call (latencyMs)")
    if latency <= a.value:
        return Reading.passed(f"latency {js_number(latency)} ms (at most {js_number(a.value)} ms)")
    return Reading.failed(
        f"expected a latency of at most {js_number(a.value)} ms; the call took {js_number(latency)} ms"
    )


GRADERS: dict[type[AssertionBase], Grader] = dict(
    [
        entry(CostMax, _cost_max),
        entry(LatencyMax, _latency_max),
    ]
)
"""Telemetry graders, keyed by assertion class."""
