"""What a run spent and saved: the budget's summary, auto repeats' saved runs, carried samples.

Pure functions from records (and the budget's ledger) to the summary's sections and the terminal's
lines; no pytest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_omk.execute.budget import SKIP_PREFIX, BudgetLimits, Spend


def budget_skipped(row: Mapping[str, Any]) -> bool:
    """Whether the budget stopped this sample (it was skipped, not run)."""
    return row.get("outcome") == "skipped" and str(row.get("skipReason") or "").startswith(SKIP_PREFIX)


def budget_summary(rows: Sequence[Mapping[str, Any]], spend: Spend, limits: BudgetLimits) -> dict[str, Any]:
    """The summary's ``budget`` section."""
    total = spend.total()
    return {
        "limitUSD": limits.usd,
        "limitTokens": limits.tokens,
        "spentUSD": round(total.cost_usd, 6),
        "tokens": total.tokens,
        "unpricedCalls": total.unpriced_calls,
        "unpricedTokens": total.unpriced_tokens,
        "refusedCalls": spend.refused,
        "notRun": sum(1 for row in rows if budget_skipped(row)),
        "roles": {role: totals.as_dict() for role, totals in spend.roles.items()},
    }


def budget_lines(section: Mapping[str, Any]) -> list[str]:
    """``omk budget: $0.0300 of $0.0350 spent on 3 live calls (model 3, judge 0); 9 samples not run``."""
    roles = section.get("roles") or {}
    calls = sum(int(r.get("calls", 0)) for r in roles.values())
    split = ", ".join(f"{role} {int(r.get('calls', 0))}" for role, r in roles.items())
    caps = []
    if section.get("limitUSD") is not None:
        caps.append(f"${section['spentUSD']:.4f} of ${section['limitUSD']:g}")
    if section.get("limitTokens") is not None:
        caps.append(f"{section['tokens']:,} of {section['limitTokens']:,} tokens")
    line = f"omk budget: {' and '.join(caps)} spent on {calls} live calls ({split})"
    not_run = int(section.get("notRun", 0))
    line += f"; {not_run} samples not run" if not_run else "; every sample ran"
    lines = [line]
    if section.get("unpricedCalls"):
        lines.append(
            f"omk budget: {section['unpricedCalls']} unpriced calls ({section['unpricedTokens']:,} tokens) are not in "
            "the dollar figure: they count by tokens only (--omk-budget-tokens)"
        )
    return lines


def repeat_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    """The summary's ``repeats`` section under ``--omk-repeat auto``: runs made, most possible, saved."""
    autos = [
        (row["repeats"]["n"], row["repeats"]["auto"])
        for row in rows
        if (row.get("repeats") or {}).get("auto")
    ]
    if not autos:
        return None
    runs = sum(n for n, _ in autos)
    maximum = sum(int(auto["max"]) for _, auto in autos)
    return {"runs": runs, "maximum": maximum, "saved": maximum - runs}


def repeat_lines(section: Mapping[str, Any] | None) -> list[str]:
    """``auto repeats: 817 runs of 2000 at most (1183 saved)`` (nothing without ``auto``)."""
    if not section:
        return []
    return [
        f"auto repeats: {section['runs']} runs of {section['maximum']} at most ({section['saved']} saved)"
    ]


def carried_lines(rows: Sequence[Mapping[str, Any]], baseline: str | None) -> list[str]:
    """``--omk-changed: 999 carried from base.json (inputs unchanged; not run; 2 failed there)``."""
    carried = [row for row in rows if row.get("carried")]
    if not carried:
        return []
    failed = sum(1 for row in carried if row.get("outcome") in ("failed", "error"))
    tail = f"; {failed} failed there" if failed else ""
    return [f"--omk-changed: {len(carried)} carried from {baseline} (inputs unchanged; not run{tail})"]


def extra_totals(
    rows: Sequence[Mapping[str, Any]], *, limits: BudgetLimits, spend: Spend | None, mutate: bool
) -> dict[str, Any]:
    """The summary's ``budget``, ``repeats``, ``carried`` and ``mutation`` parts (those in use)."""
    from pytest_omk.report.mutation import mutation_summary

    totals: dict[str, Any] = {}
    if limits.active:
        totals["budget"] = budget_summary(rows, spend or Spend(), limits)
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
    budget = totals.get("budget")
    if budget:
        incomplete = bool(budget["notRun"]) and not allow_incomplete
        lines += [(line, incomplete) for line in budget_lines(budget)]
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


def spend_properties(totals: Mapping[str, Any]) -> list[tuple[str, str]]:
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
