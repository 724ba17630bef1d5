"""Capability coverage: pass rate and mean composite per ``capability`` and per ``difficulty``.

A sample counts once for each of its capabilities. Its pass value is its repeat pass rate when it
ran ``--omk-repeat`` times, else 1 for passed (or xpassed: a tripwire whose checks all passed) and
0 for failed, errored or xfailed; skipped samples are not counted. With variants, every variant has
its own rows. Samples without the metadata are left out of that table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_omk.grade.stats import mean2, present
from pytest_omk.js.numbers import js_sum, round2

_PASSING = ("passed", "xpassed")
_FAILING = ("failed", "error", "xfailed")


def pass_value(row: Mapping[str, Any]) -> float | None:
    """How much the sample passed (0..1), or ``None`` when it did not run to a verdict."""
    repeats = row.get("repeats")
    if repeats:
        return float(repeats["passRate"])
    outcome = row.get("outcome")
    if outcome in _PASSING:
        return 1.0
    if outcome in _FAILING:
        return 0.0
    return None


def _labels(row: Mapping[str, Any], field: str) -> list[str]:
    value = (row.get("metadata") or {}).get(field)
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _table(rows: Sequence[Mapping[str, Any]], field: str) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str | None], list[Mapping[str, Any]]] = {}
    for row in rows:
        for label in _labels(row, field):
            groups.setdefault((label, row.get("variant")), []).append(row)
    table = []
    # By label; within a label, variants keep the order of the rows (the order they were given).
    for (label, variant), members in sorted(groups.items(), key=lambda kv: kv[0][0]):
        values = present(pass_value(r) for r in members)
        table.append(
            {
                "name": label,
                "variant": variant,
                "samples": len(members),
                "counted": len(values),
                "passRate": round2(js_sum(values) / len(values)) if values else None,
                "composite": mean2(r["scores"]["composite"] for r in members),
            }
        )
    return table


def coverage(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The report's ``coverage`` section: one table per metadata field."""
    return {"capability": _table(rows, "capability"), "difficulty": _table(rows, "difficulty")}
