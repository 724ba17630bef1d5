"""The summary's optional parts, those in use: the budget (:mod:`.budget`), auto repeats
(:mod:`.repeated`), carried samples (:mod:`.changed`) and mutation (:mod:`.mutation`); their lines,
their JUnit properties and the exit rule they add. No pytest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_omk.execute.budget import BudgetLimits
from pytest_omk.grade.repeats import repeat_lines, repeat_summary
from pytest_omk.report.budget import budget_lines, budget_summary
from pytest_omk.report.changed import carried_lines
from pytest_omk.report.not_graded import not_graded_lines, with_not_graded, with_not_graded_calls
from pytest_omk.report.usage import total_cost

if TYPE_CHECKING:
    from pytest_omk.models.accounting import Role, Usage


def extra_totals(
    rows: Sequence[Mapping[str, Any]],
    *,
    limits: BudgetLimits,
    refused: int,
    mutate: bool,
    not_graded: Mapping[Role, Usage] | None = None,
) -> dict[str, Any]:
    """The summary's ``budget``, ``repeats``, ``carried`` and ``mutation`` parts (those in use);
    with ``not_graded`` calls (samples started, never run), the ``usage`` and cost that count them."""
    from pytest_omk.report.mutation import mutation_summary

    totals: dict[str, Any] = {}
    if not_graded and any(part.calls for part in not_graded.values()):
        totals["usage"] = with_not_graded(rows, not_graded)
        totals["costUSD"] = total_cost(totals["usage"])
        totals["modelCalls"] = with_not_graded_calls(rows, not_graded)
    if limits.active:
        totals["budget"] = budget_summary(rows, refused, limits, totals.get("usage"))
    repeats = repeat_summary(rows)
    if repeats is not None:
        totals["repeats"] = repeats
    carried = sum(1 for row in rows if row.get("carried"))
    if carried:
        totals["carried"] = carried
    if mutate:
        totals["mutation"] = mutation_summary(rows)
    return totals


def extra_lines(
    rows: Sequence[Mapping[str, Any]],
    totals: Mapping[str, Any],
    *,
    baseline: str | None,
    allow_incomplete: bool,
) -> list[tuple[str, bool]]:
    """The lines of the parts in use, each with whether it is shown in red (an incomplete run)."""
    lines = [(line, False) for line in repeat_lines(totals.get("repeats")) + carried_lines(rows, baseline)]
    lines += [(line, False) for line in not_graded_lines(totals.get("usage") or {})]
    budget = totals.get("budget")
    if budget:
        incomplete = bool(budget["notRun"]) and not allow_incomplete
        lines += [(line, incomplete) for line in budget_lines(budget, totals.get("usage") or {})]
    return lines


def unfinished(
    rows: Sequence[Mapping[str, Any]], totals: Mapping[str, Any], *, allow_incomplete: bool
) -> bool:
    """Whether the run must fail though its tests passed: a budget stopped samples (unless
    ``--omk-allow-incomplete``), or a carried sample failed in the baseline (nothing changed since)."""
    budget = totals.get("budget")
    if budget and budget["notRun"] and not allow_incomplete:
        return True
    return any(row.get("carried") and row.get("outcome") in ("failed", "error") for row in rows)


def summary_properties(totals: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Suite-level JUnit properties of the parts in use (carried samples are not testcases)."""
    props: list[tuple[str, str]] = []
    budget = totals.get("budget")
    if budget:
        props += [
            ("omk.budget.spent_usd", f"{budget['spentUSD']:.6f}"),
            ("omk.budget.not_run", str(budget["notRun"])),
        ]
    if totals.get("repeats"):
        props.append(("omk.repeat.saved", str(totals["repeats"]["saved"])))
    if totals.get("carried"):
        props.append(("omk.carried", str(totals["carried"])))
    if totals.get("mutation"):
        props.append(("omk.mutation.weak", str(len(totals["mutation"]["weak"]))))
    return props
