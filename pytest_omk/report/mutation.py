"""The ``omk mutation`` section (``--omk-mutate``): pure functions from records to summary and lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def mutation_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The summary's ``mutation`` section: samples assessed, mutants, caught, the weak samples."""
    assessed = [row for row in rows if (row.get("mutation") or {}).get("assessed")]
    return {
        "assessed": len(assessed),
        "mutants": sum(int(row["mutation"]["mutants"]) for row in assessed),
        "caught": sum(int(row["mutation"]["caught"]) for row in assessed),
        "weak": [str(row["nodeid"]) for row in assessed if row["mutation"]["weak"]],
    }


def mutation_lines(
    rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any], *, verbose: bool
) -> list[str]:
    """Per-sample counts (every sample with ``-v``; else the weak ones), then the totals."""
    lines: list[str] = []
    weak = set(summary["weak"])
    for row in rows:
        mutation = row.get("mutation") or {}
        if not mutation.get("assessed"):
            if verbose and mutation:
                lines.append(f"{row['nodeid']}: not assessed (its output fails its own checks)")
            continue
        if verbose or row["nodeid"] in weak:
            escaped = [
                r["operator"] for r in mutation.get("results", []) if r.get("applied") and not r.get("caught")
            ]
            tail = f"; escaped: {', '.join(escaped)}" if escaped else ""
            mark = "  WEAK" if row["nodeid"] in weak else ""
            lines.append(
                f"{row['nodeid']}: caught {mutation['caught']}/{mutation['mutants']} mutants{tail}{mark}"
            )
    lines.append(
        f"mutation: {summary['assessed']} samples assessed, {summary['caught']}/{summary['mutants']} mutants caught, "
        f"{len(weak)} weak (checks that pass every mutant)"
    )
    if weak:
        lines.append("weak samples: " + ", ".join(sorted(weak)))
    return lines
