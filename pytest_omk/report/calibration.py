"""How a calibration item's figures read: terminal lines, the failure text, Markdown and CSV rows.

Every text that came from a model or a file (the judge's reasons, sample ids, the annotator) passes
through the caller's ``shown`` function (the run's scrubber and escaper) before it is printed.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from pytest_omk.models.calibration import Calibration, Rate
from pytest_omk.report.markdown_text import fenced

Shown = Callable[[str], str]
REASON_CHARS = 160
LISTED_IDS = 10


def _f(value: float | None, digits: int = 3) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


def _rate(name: str, rate: Rate | None) -> str:
    if rate is None:
        return f"{name} undefined (no such labels)"
    return f"{name} {rate.rate:.2f} ({rate.hits}/{rate.total}, 95% CI {rate.low:.2f}-{rate.high:.2f})"


def _ids(ids: Sequence[str], shown: Shown) -> str:
    more = f" ... (+{len(ids) - LISTED_IDS})" if len(ids) > LISTED_IDS else ""
    return ", ".join(shown(i) for i in ids[:LISTED_IDS]) + more


def _reason(text: str, shown: Shown) -> str:
    flat = " ".join(text.split())
    return shown(flat if len(flat) <= REASON_CHARS else flat[: REASON_CHARS - 3] + "...")


def figure_lines(found: Calibration, shown: Shown) -> list[str]:
    """The figures, the gold ids left out, the warning and the worst disagreements."""
    variant = f" (variant {shown(found.variant)})" if found.variant else ""
    lines = [
        f"judge agreement{variant}: {found.pairs} pairs, annotator {shown(found.annotator)} v{shown(found.version)}",
        f"  alpha {_f(found.alpha)} (95% CI {_f(found.alphaLow)} to {_f(found.alphaHigh)}), "
        f"ordinal alpha {_f(found.ordinalAlpha)}, kappa {_f(found.kappa)}, pearson {_f(found.pearson)}",
        f"  pass = score >= {found.threshold:g}: {_rate('TPR', found.tpr)}; {_rate('TNR', found.tnr)}",
    ]
    if found.missing:
        lines.append(f"  not collected ({len(found.missing)}): {_ids(found.missing, shown)}")
    if found.unjudged:
        lines.append(f"  no judge score ({len(found.unjudged)}): {_ids(found.unjudged, shown)}")
    if found.contamination:
        lines.append(f"  warning: {shown(found.contamination)}")
    if found.worst:
        lines.append("  largest disagreements (sample: gold vs judge, judge's reason):")
        lines += [
            f"    {shown(d.sample_id)}: {d.gold:g} vs {d.judge:g}, {_reason(d.reason, shown) or '(no reason)'}"
            for d in found.worst
        ]
    return lines


def failure_text(found: Calibration, shown: Shown) -> str:
    """What a failed calibration item prints: the gates it failed, then the figures."""
    return "\n".join([*(f"FAILED gate: {f}" for f in found.failures), *figure_lines(found, shown)])


def read_section(document: Mapping[str, Any]) -> tuple[list[Calibration], int]:
    """The report's ``calibration`` entries that are well formed, and how many were not (a report
    handed to ``render`` is hostile input: a bad entry is counted and shown as such, never raised)."""
    raw = document.get("calibration")
    entries = raw if isinstance(raw, list) else []
    good: list[Calibration] = []
    for entry in entries:
        try:
            good.append(Calibration.model_validate(entry))
        except ValidationError:
            continue
    return good, len(entries) - len(good) + (0 if raw is None or isinstance(raw, list) else 1)


def verdict_lines(found: Calibration) -> list[str]:
    """The dataset, its verdict and each failed gate."""
    verdict = "FAILED" if found.failures else "passed"
    return [f"{found.dataset}: {verdict}", *(f"FAILED gate: {f}" for f in found.failures)]


def markdown_section(document: Mapping[str, Any]) -> list[str]:
    """The Markdown report's "Judge agreement" section (empty without a calibration)."""
    items, bad = read_section(document)
    if not items and not bad:
        return []
    lines = ["## Judge agreement", ""]
    for item in items:
        lines += [*fenced("\n".join([*verdict_lines(item), *figure_lines(item, str)]), "text"), ""]
    if bad:
        lines += [f"{bad} calibration entries of the report are malformed and not shown.", ""]
    return lines


CSV_COLUMNS = ("dataset", "variant", "sample_id", "gold", "judge", "gold_pass", "judge_pass")


def csv_text(rows: Iterable[Sequence[object]]) -> str:
    """``--omk-gold-export``'s file: a header then one row per (sample, gold, judge) pair.

    A cell that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first) is quoted with
    a leading apostrophe: sample ids come from committed files.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    return out.getvalue()


def _cell(value: object) -> object:
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
