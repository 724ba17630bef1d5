"""The trend as Markdown for a pull-request comment (``render --history --markdown PATH``).

GitHub refuses a comment body over 65,536 characters, so the text is held to that many UTF-16 code
units (what a browser counts; never fewer than characters): sample rows are dropped from the end,
where the stable samples are, with a line saying how many were left out. The same reports give the
same text byte for byte (no clock, every list in a fixed order), so a bot can find its comment by the
marker line and replace it. Every string from a report goes through
:func:`pytest_omk.report.markdown_text.cell`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_omk.models.history import LAYERS, SampleTrend, TrendDocument, TrendRun
from pytest_omk.report.history_view import (
    composite_blocks,
    outcome_marks,
    presence_text,
    sample_name,
    set_line,
    state_text,
    summary_counts,
)
from pytest_omk.report.markdown_text import cell
from pytest_omk.report.pr_comment import PR_COMMENT_CHARS
from pytest_omk.report.view import score_text

PR_COMMENT_LIMIT = PR_COMMENT_CHARS
"""GitHub's limit for an issue or pull-request comment body (the run's own PR section's too)."""
MARKER = "<!-- pytest-omk:trend -->"
SPARK_RUNS = 30
"""Runs shown per sample in the sparklines (the latest); the JSON has every run."""
LIST_NAMES = 10
"""Added or removed samples named per sample set (the rest counted)."""


def size(text: str) -> int:
    """``text``'s length as GitHub counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def render_trend_markdown(trend: TrendDocument, *, limit: int = PR_COMMENT_LIMIT) -> str:
    """The comment, at most ``limit`` UTF-16 code units."""
    head = [*_header(trend), *_layers(trend), *_sets(trend)]
    listed = [s for s in trend.samples if s.state != "stable"]
    rows = [_row(s, len(trend.runs)) for s in listed]
    stable = len(trend.samples) - len(listed)
    shown = len(rows)
    while True:
        text = "\n".join([*head, *_samples(rows[:shown], len(rows), stable)]) + "\n"
        if size(text) <= limit or shown == 0:
            return text if size(text) <= limit else _cut(text, limit)
        # Halve while far over the limit, then one row at a time: few passes, and the most rows kept.
        shown = shown // 2 if size(text) > 2 * limit else shown - 1


def _header(trend: TrendDocument) -> list[str]:
    runs = trend.runs
    span = f"{cell(runs[0].startedAt)} → {cell(runs[-1].startedAt)}" if runs else "no runs"
    return [
        MARKER,
        f"## pytest-omk trend: {len(runs)} runs, {span}",
        "",
        summary_counts(trend),
    ]


def _layers(trend: TrendDocument) -> list[str]:
    if not trend.runs:
        return []
    slides = {s.layer: s for s in trend.sliding}
    lines = [
        "",
        "| layer | first run | last run | last runs vs the ones before | |",
        "|---|---:|---:|---|---|",
    ]
    for layer in LAYERS:
        first, last = _mean(trend.runs[0], layer), _mean(trend.runs[-1], layer)
        slide = slides.get(layer)
        if first == "-" and last == "-" and slide is None:
            continue
        compared, flag = "-", ""
        if slide is not None:
            window = f"runs {slide.recentRuns[0]}-{slide.recentRuns[-1]} vs {slide.previousRuns[0]}-{slide.previousRuns[-1]}"
            interval = f" \\[{slide.interval[0]:+.2f}, {slide.interval[1]:+.2f}\\]" if slide.interval else ""
            compared = (
                f"{window}: {score_text(slide.meanDifference, signed=True)}{interval}, {slide.pairs} samples"
            )
            flag = "**sliding**" if slide.sliding else ""
            flag += " (across sample sets)" if slide.acrossSampleSets else ""
        lines.append(f"| {layer} | {first} | {last} | {compared} | {flag} |")
    return lines


def _mean(run: TrendRun, layer: str) -> str:
    point = run.layers.get(layer)
    if point is None or point.mean is None:
        return "-"
    low_high = f" ({point.interval[0]:.2f}–{point.interval[1]:.2f})" if point.interval else ""
    return f"{point.mean:.2f}{low_high}"


def _sets(trend: TrendDocument) -> list[str]:
    if len(trend.sampleSets) < 2:
        return []
    lines = [
        "",
        f"**{len(trend.sampleSets)} sample sets** (runs of different sample sets are not mixed):",
        "",
    ]
    for sample_set in trend.sampleSets:
        lines.append("- " + set_line(sample_set, LIST_NAMES, cell))
    return lines


def _row(sample: SampleTrend, runs: int) -> str:
    outcomes = outcome_marks(sample.outcomes[-SPARK_RUNS:])
    blocks = composite_blocks(sample.composite[-SPARK_RUNS:])
    more = "…" if runs > SPARK_RUNS else ""
    presence = presence_text(sample, runs)
    state = state_text(sample) + (f" ({presence})" if presence else "")
    return f"| {cell(sample_name(sample))} | {cell(state)} | `{more}{outcomes}` | `{more}{blocks}` |"


def _samples(rows: Sequence[str], total: int, stable: int) -> list[str]:
    lines = ["", f"### Samples needing a look ({total})" if total else "### No sample needs a look"]
    if rows:
        lines += ["", "| sample | state | outcomes (✓ pass, ✗ fail, - skip, · absent) | composite |"]
        lines += ["|---|---|---|---|", *rows]
    if len(rows) < total:
        lines += [
            "",
            f"_{total - len(rows)} more not shown (the comment is limited in size): see the HTML or JSON._",
        ]
    lines += ["", f"{stable} stable samples not listed."]
    return lines


def _cut(text: str, limit: int) -> str:
    """Last resort when even the head is too long: cut at a line and say so."""
    note = "\n\n_Trend truncated to fit the size limit._\n"
    kept: list[str] = []
    used = size(note)
    for line in text.split("\n"):
        if used + size(line) + 1 > limit:
            break
        kept.append(line)
        used += size(line) + 1
    return "\n".join(kept) + note
