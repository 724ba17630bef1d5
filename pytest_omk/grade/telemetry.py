"""Graders for execution telemetry: ``cost_max`` (USD) and ``latency_max`` (milliseconds).

An executor that does not report a cost or a latency gives no evidence either way, so the reading
is missing (left out of the scores), never a failure and never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_omk.grade._table import entry
from pytest_omk.grade.base import GradeContext, Grader
from pytest_omk.js.text import js_number
from pytest_omk.models import AssertionBase
from pytest_omk.models.assertions import CostMax, LatencyMax
from pytest_omk.models.results import Reading


@dataclass(frozen=True)
class _Measure:
    """How one reported quantity is named and shown in readings."""

    name: str
    verb: str
    """What "the call" did: ``cost`` $0.02, ``took`` 150 ms."""
    missing: str
    prefix: str = ""
    suffix: str = ""

    def show(self, value: float) -> str:
        return f"{self.prefix}{js_number(value)}{self.suffix}"

    def at_most(self, measured: float | None, limit: float) -> Reading:
        """``measured <= limit`` as a reading; missing when nothing was measured."""
        if measured is None:
            return Reading.missing(self.missing, "no-telemetry")
        shown, bound = self.show(measured), self.show(limit)
        if measured <= limit:
            return Reading.passed(f"{self.name} {shown} (at most {bound})")
        return Reading.failed(f"expected a {self.name} of at most {bound}; the call {self.verb} {shown}")


_COST = _Measure("cost", "cost", "the executor reported no cost (costUSD)", prefix="$")
_LATENCY = _Measure("latency", "took", "no latency was measured for this call (latencyMs)", suffix=" ms")


def _cost_max(a: CostMax, ctx: GradeContext) -> Reading:
    return _COST.at_most(ctx.execution.costUSD, a.value)


def _latency_max(a: LatencyMax, ctx: GradeContext) -> Reading:
    return _LATENCY.at_most(ctx.execution.latencyMs, a.value)


GRADERS: dict[type[AssertionBase], Grader] = dict(
    [
        entry(CostMax, _cost_max),
        entry(LatencyMax, _latency_max),
    ]
)
"""Telemetry graders, keyed by assertion class."""
