"""Plain-text pieces of the trend shared by its HTML and Markdown writers (callers escape them)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from pytest_omk.compare.history_states import STATE_ORDER
from pytest_omk.models.history import Mark, SampleSet, SampleTrend, TrendDocument
from pytest_omk.report.view import capped

NAME_CHARS = 300
"""A sample's name is cut to this many characters where it is shown (the JSON keeps it whole)."""
_MARK_CHARS: dict[str, str] = {"pass": "✓", "fail": "✗", "skip": "-", "absent": "·"}
_BLOCKS = "▁▂▃▄▅▆▇█"


def sample_name(sample: SampleTrend) -> str:
    """The node id, and the variant in brackets when there is one (cut to :data:`NAME_CHARS`)."""
    name = sample.nodeid if sample.variant is None else f"{sample.nodeid} [{sample.variant}]"
    return capped(name, NAME_CHARS)


def state_text(sample: SampleTrend) -> str:
    """The state in words, with the run it began in."""
    if sample.state == "newly failing":
        return f"newly failing (run {sample.since})"
    if sample.state == "failing since":
        return f"failing since run {sample.since}"
    if sample.state == "fixed":
        return f"fixed in run {sample.since}"
    if sample.state == "flaky":
        flips = f"{sample.flips} flips" if sample.flips >= 2 else ""
        repeats = "pass rate between 0 and 1 under repeats" if sample.repeatedFlaky else ""
        return "flaky (" + "; ".join(part for part in (flips, repeats) if part) + ")"
    return sample.state


def presence_text(sample: SampleTrend, runs: int) -> str:
    """Where the sample is not in every run: ``added in run 3``, ``removed after run 5`` or both."""
    if sample.firstRun is None or sample.lastRun is None:
        return "in no run"
    parts = []
    if sample.firstRun > 1:
        parts.append(f"added in run {sample.firstRun}")
    if sample.lastRun < runs:
        parts.append(f"removed after run {sample.lastRun}")
    return ", ".join(parts)


def outcome_marks(marks: Sequence[Mark]) -> str:
    """One character per run: ✓ pass, ✗ fail, - skip, · absent."""
    return "".join(_MARK_CHARS[mark] for mark in marks)


def composite_blocks(values: Sequence[float | None]) -> str:
    """One block per run, its height the composite (1 lowest, 5 highest); · when there is none."""
    out = []
    for value in values:
        if value is None:
            out.append("·")
        else:
            step = round((min(max(value, 1.0), 5.0) - 1.0) / 4.0 * (len(_BLOCKS) - 1))
            out.append(_BLOCKS[step])
    return "".join(out)


def summary_counts(trend: TrendDocument) -> str:
    """``1 newly failing, 2 flaky, …, 7 stable; sliding: judge`` (states in :data:`STATE_ORDER`)."""
    counts: Counter[str] = Counter(sample.state for sample in trend.samples)
    states = ", ".join(f"{counts[state]} {state}" for state in STATE_ORDER if counts[state])
    slides = [s.layer for s in trend.sliding if s.sliding]
    slid = f"; sliding: {', '.join(slides)}" if slides else "; no layer sliding"
    return (states or "no samples") + (slid if len(trend.runs) > trend.window else "")


def run_span(runs: Sequence[int]) -> str:
    """``runs 1-4``, ``run 3`` or ``runs 1, 3, 5`` (runs need not be contiguous)."""
    if len(runs) == 1:
        return f"run {runs[0]}"
    if runs == list(range(runs[0], runs[-1] + 1)):
        return f"runs {runs[0]}-{runs[-1]}"
    return "runs " + ", ".join(map(str, runs))


def set_line(sample_set: SampleSet, names: int, escape: Callable[[str], str]) -> str:
    """One sample set: its digest, its runs, and what it added and removed (``names`` named each)."""

    def listed(label: str, keys: Sequence[str]) -> str:
        if not keys:
            return ""
        shown = ", ".join(escape(capped(k, NAME_CHARS)) for k in keys[:names])
        more = f" and {len(keys) - names} more" if len(keys) > names else ""
        return f"; {len(keys)} {label}: {shown}{more}"

    digest = escape(capped(sample_set.digest, 24)) if sample_set.digest else "no digest"
    return (
        f"set {sample_set.index} ({digest}), {run_span(sample_set.runs)}"
        + listed("added", sample_set.added)
        + listed("removed", sample_set.removed)
    )
