"""Terminal lines of the comparison parts of ``omk scores``: variants, comparisons, baseline, coverage."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_omk.compare.bootstrap import CONFIDENCE, RESAMPLES
from pytest_omk.compare.variants import MEAN_LAYERS
from pytest_omk.report.wrap import TableRow

_SHOWN_LAYERS = tuple(layer for layer in MEAN_LAYERS if layer != "assertions")


def cell(value: float | None, *, signed: bool = False) -> str:
    """A score cell: two decimals, ``-`` when missing."""
    if value is None:
        return "-"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def table(
    header: Sequence[str], body: Sequence[Sequence[str]], *, left: int = 1, indent: str = "  "
) -> list[str]:
    """Aligned columns: the first ``left`` columns left-justified, the rest right-justified (rows
    the terminal's wrapping keeps whole)."""
    rows = [list(header), *(list(r) for r in body)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return [
        TableRow(
            indent
            + "  ".join(
                c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()
        )
        for r in rows
    ]


def variant_lines(
    variants: Sequence[Mapping[str, Any]], comparisons: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Per-variant means, then each variant's paired comparison with the first one."""
    if not variants:
        return []
    body = [
        [
            v["name"],
            str(v["samples"]),
            *(str(v["outcomes"].get(k, 0)) for k in ("passed", "failed")),
            *(cell(v["means"][layer]) for layer in _SHOWN_LAYERS),
        ]
        for v in variants
    ]
    lines = ["variants (mean over samples):"]
    lines += table(["variant", "samples", "passed", "failed", *_SHOWN_LAYERS], body)
    if comparisons:
        lines.append(
            f"paired comparison of composite vs {comparisons[0]['reference']} "
            f"({CONFIDENCE:.0%} bootstrap interval, {RESAMPLES} resamples):"
        )
        for c in comparisons:
            interval = c["interval"]
            spread = (
                f" [{cell(interval['low'], signed=True)}, {cell(interval['high'], signed=True)}]"
                if interval
                else ""
            )
            lines.append(
                f"  {c['variant']} - {c['reference']}: {cell(c['meanDifference'], signed=True)}{spread} "
                f"over {c['pairs']} samples: {c['verdict']}"
            )
    return lines


def baseline_lines(section: Mapping[str, Any] | None, message: str | None) -> list[str]:
    """Layer deltas against the baseline, the samples that changed, and the regression message."""
    if section is None:
        return []
    lines = [
        f"baseline {section['path']}: {section['matched']} samples matched, "
        f"{section['new']} new, {section['notRun']} not run"
    ]
    for group in section["layers"]:
        where = f"[{group['variant']}] " if group["variant"] else ""
        deltas = "  ".join(
            f"{layer} {cell(stats['delta'], signed=True)}"
            for layer, stats in group["layers"].items()
            if layer in _SHOWN_LAYERS
        )
        lines.append(f"  {where}mean delta: {deltas}")
    for change in section["changed"]:
        before, after = change["baselineScores"]["composite"], change["scores"]["composite"]
        outcome = change["outcome"]
        if change["baselineOutcome"] != outcome:
            outcome = f"{change['baselineOutcome']} -> {outcome}"
        lines.append(
            f"  changed: {change['nodeid']}  {outcome}  composite {cell(before)} -> {cell(after)} "
            f"({cell(change['deltas']['composite'], signed=True)})"
        )
    if message:
        lines.append(message)
    return lines


def coverage_lines(section: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """The capability and difficulty tables (shown at ``-v``)."""
    lines: list[str] = []
    for field in ("capability", "difficulty"):
        rows = section.get(field) or []
        if not rows:
            continue
        with_variants = any(r["variant"] for r in rows)
        header = [field, *(["variant"] if with_variants else []), "samples", "pass rate", "composite"]
        body = [
            [
                r["name"],
                *([r["variant"] or "-"] if with_variants else []),
                str(r["samples"]),
                cell(r["passRate"]),
                cell(r["composite"]),
            ]
            for r in rows
        ]
        lines.append(f"coverage by {field}:")
        lines += table(header, body, left=2 if with_variants else 1)
    return lines


def comparison_lines(analysis: Mapping[str, Any], *, message: str | None, coverage: bool) -> list[str]:
    """All comparison lines, each block preceded by a blank line."""
    blocks = [
        variant_lines(analysis["variants"], analysis["comparisons"]),
        baseline_lines(analysis["baseline"], message),
        coverage_lines(analysis["coverage"]) if coverage else [],
    ]
    lines: list[str] = []
    for block in blocks:
        if block:
            lines += ["", *block]
    return lines
