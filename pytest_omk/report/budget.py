"""The budget's part of the summary (``--omk-budget-usd``, ``--omk-budget-tokens``): its section
and its terminal lines, from the records' usage (the one per-role usage block). No pytest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_omk._util.money import money
from pytest_omk.execute.budget import SKIP_PREFIX, BudgetLimits
from pytest_omk.js.numbers import js_sum, to_fixed
from pytest_omk.report.usage import usage_totals


def budget_skipped(row: Mapping[str, Any]) -> bool:
    """Whether the budget stopped this sample (it was skipped, not run)."""
    return row.get("outcome") == "skipped" and str(row.get("skipReason") or "").startswith(SKIP_PREFIX)


def budget_summary(
    rows: Sequence[Mapping[str, Any]],
    refused: int,
    limits: BudgetLimits,
    usage: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The summary's ``budget`` section: the caps, the totals of the usage block's live spend
    compared to them (``usage``: the run's, when it differs from the rows'), the refused calls and
    the samples not run."""
    spent = [part["spent"] for part in (usage or usage_totals(rows)).values() if part.get("spent")]
    return {
        "limitUSD": limits.usd,
        "limitTokens": limits.tokens,
        "spentUSD": to_fixed(js_sum([float(part["costUSD"]) for part in spent]), 6),
        "tokens": sum(int(part["tokens"]) for part in spent),
        "refusedCalls": refused,
        "notRun": sum(1 for row in rows if budget_skipped(row)),
    }


def budget_lines(section: Mapping[str, Any], usage: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """``omk budget: $0.03 of $0.035 spent on 3 live calls (model 3, judge 0); 9 samples not run``,
    then what the figures leave out or estimate (from the usage block's ``spent`` parts)."""
    spent = {role: part.get("spent") or {} for role, part in usage.items()}
    answered = {
        role: int(s.get("pricedCalls", 0)) + int(s.get("unpricedCalls", 0)) for role, s in spent.items()
    }
    split = ", ".join(f"{role} {calls}" for role, calls in answered.items())
    caps = []
    if section.get("limitUSD") is not None:
        caps.append(f"{money(section['spentUSD'])} of {money(section['limitUSD'])}")
    if section.get("limitTokens") is not None:
        caps.append(f"{section['tokens']:,} of {section['limitTokens']:,} tokens")
    line = f"omk budget: {' and '.join(caps)} spent on {sum(answered.values())} live calls ({split})"
    not_run = int(section.get("notRun", 0))
    not_graded = sum(int(part.get("notGraded") or 0) for part in usage.values())
    if not_run or not_graded:
        line += f"; {not_run} samples not run" if not_run else "; not every sample ran"
    else:
        line += "; every sample ran"
    lines = [line]
    unpriced = sum(int(s.get("unpricedCalls", 0)) for s in spent.values())
    if unpriced:
        tokens = sum(int(s.get("unpricedTokens", 0)) for s in spent.values())
        lines.append(
            f"omk budget: {unpriced} unpriced calls ({tokens:,} tokens) are not in "
            "the dollar figure: they count by tokens only (--omk-budget-tokens)"
        )
    estimated = sum(int(s.get("estimatedCalls", 0)) for s in spent.values())
    if estimated:
        lines.append(
            f"omk budget: {estimated} live calls did not say what they used: counted by an "
            "estimate (a token per 4 bytes of request and answer)"
        )
    return lines
