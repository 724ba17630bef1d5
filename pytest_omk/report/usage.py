"""The run's model calls by who made them, summed from the records: what the totals and every report
show of the model under test's calls apart from the judge's.

Each record's ``usage`` holds every call made for its sample (those of a sample that ended in an
error too), noted as the calls were answered (:mod:`pytest_omk.models.accounting`); this module
only adds them up and words them. Costs are summed left to right and rounded to six decimals, as
the reference sums them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_omk.js.numbers import js_sum, to_fixed
from pytest_omk.report.view import money

ROLE_NAMES = {"model": "model under test", "judge": "judge"}
"""How each role is named in the terminal and the HTML and Markdown reports."""


def role_totals(rows: Iterable[Mapping[str, Any]], role: str) -> dict[str, Any]:
    """One role's calls over ``rows``: records without ``usage`` (older reports) and samples carried
    from the baseline (``--omk-changed``: no call this run) add nothing."""
    parts = [
        usage[role]
        for row in rows
        if not row.get("carried") and (usage := row.get("usage")) and role in usage
    ]
    costs = [part["costUSD"] for part in parts if part.get("costUSD") is not None]
    totals: dict[str, Any] = {
        **{
            key: sum(int(part.get(key) or 0) for part in parts)
            for key in ("calls", "live", "replayed", "failed")
        },
        "inputTokens": _known_sum(part.get("inputTokens") for part in parts),
        "outputTokens": _known_sum(part.get("outputTokens") for part in parts),
        "costUSD": to_fixed(js_sum(costs), 6) if costs else None,
        "costUnknown": sum(int(part.get("costUnknown") or 0) for part in parts),
    }
    spent = [part["spent"] for part in parts if isinstance(part.get("spent"), Mapping)]
    if spent:
        totals["spent"] = {
            key: sum(int(part.get(key) or 0) for part in spent)
            for key in ("pricedCalls", "unpricedCalls", "tokens", "unpricedTokens", "estimatedCalls")
        }
        totals["spent"] = {
            "costUSD": to_fixed(js_sum([float(p.get("costUSD") or 0) for p in spent]), 6),
            **totals["spent"],
        }
    return totals


def usage_totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The run's ``usage``: each role's totals."""
    return {role: role_totals(rows, role) for role in ROLE_NAMES}


def total_cost(usage: Mapping[str, Mapping[str, Any]]) -> float | None:
    """What every call cost together (``None``: no call reported a cost)."""
    costs = [part["costUSD"] for part in usage.values() if part.get("costUSD") is not None]
    return to_fixed(js_sum(costs), 6) if costs else None


def _known_sum(values: Iterable[int | None]) -> int | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def role_line(role: str, part: Mapping[str, Any]) -> str:
    """``judge: 3 calls (3 live, 0 replayed), tokens 300 in / 30 out, $0.003``."""
    return f"{ROLE_NAMES[role]}: {role_summary(part)}"


def role_summary(part: Mapping[str, Any]) -> str:
    """``3 calls (3 live, 0 replayed), tokens 300 in / 30 out, $0.003``: one role's calls in words."""
    calls = part.get("calls", 0)
    failed = f", {part['failed']} failed" if part.get("failed") else ""
    text = (
        f"{calls} call{'' if calls == 1 else 's'} "
        f"({part.get('live', 0)} live, {part.get('replayed', 0)} replayed{failed})"
    )
    if part.get("inputTokens") is not None or part.get("outputTokens") is not None:
        text += f", tokens {_tokens(part.get('inputTokens'))} in / {_tokens(part.get('outputTokens'))} out"
    text += f", {money(part.get('costUSD'))}"
    if part.get("costUnknown"):
        text += f" (+ {part['costUnknown']} of unknown cost)"
    return text


def _tokens(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def usage_lines(usage: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per role, shown when the judge made calls (otherwise every call is the model's)."""
    if not usage.get("judge", {}).get("calls"):
        return []
    return [role_line(role, usage[role]) for role in ROLE_NAMES if role in usage]
