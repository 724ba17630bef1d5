"""The Markdown section made for a pull-request comment: what changed against ``--omk-baseline``.

Newly failing samples, newly passing ones, the samples whose scores moved, then how many did not
change. Every list is in node-id order and the section holds no time or duration, so the same two
runs give the same text byte for byte: a bot can find its comment by the marker line and replace it
instead of adding another. It is rendered from the report's ``baseline`` section (and, with
``--omk-known-failures=xfail``, the samples' ``knownFailure``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_omk.report.markdown_text import cell
from pytest_omk.report.view import SCORE_COLUMNS, Doc, score_text

MARKER = "<!-- pytest-omk:pr-comment -->"
"""The first line of the section: what a bot searches its earlier comment for."""
_FAILING = ("failed", "error")
_STILL = (*_FAILING, "xfailed")
"""Not a newly passing sample: a known failure that fails again is ``xfailed``."""


def pr_comment_section(document: Doc) -> list[str]:
    """The section's lines (empty without a baseline)."""
    baseline: Doc | None = document.get("baseline")
    if not baseline:
        return []
    changed = sorted(baseline.get("changed") or [], key=_order)
    failing = [
        c for c in changed if c.get("outcome") in _FAILING and c.get("baselineOutcome") not in _FAILING
    ]
    passing = [c for c in changed if c.get("outcome") not in _STILL and c.get("baselineOutcome") in _FAILING]
    moved = [c for c in changed if c not in failing and c not in passing]
    unchanged = int(baseline.get("matched", 0)) - len(changed)
    lines = [
        "",
        MARKER,
        "### Against the baseline",
        "",
        f"Compared with {cell(baseline.get('path', ''))}: {baseline.get('matched', 0)} samples matched, "
        f"{baseline.get('new', 0)} new, {baseline.get('notRun', 0)} not run.",
    ]
    lines += _outcome_table("Newly failing", failing)
    lines += _outcome_table("Newly passing", passing)
    lines += _score_table(moved)
    lines += ["", f"{unchanged} unchanged.", *_known(document)]
    return lines


def _known(document: Doc) -> list[str]:
    """``--omk-known-failures=xfail``: how the baseline's failures fared (they fail nothing)."""
    known = [s for s in document.get("samples") or [] if s.get("knownFailure")]
    if not known:
        return []
    again = sum(1 for s in known if s.get("outcome") == "xfailed")
    now = sum(1 for s in known if s.get("outcome") == "xpassed")
    return [
        "",
        f"Known failures (failed in the baseline too, reported as xfail): {again} failed again, "
        f"{now} pass now (xpass), {len(known) - again - now} other.",
    ]


def _order(change: Mapping[str, Any]) -> tuple[str, str]:
    return (str(change.get("nodeid", "")), str(change.get("variant") or ""))


def _move(change: Mapping[str, Any], layer: str) -> str:
    before = (change.get("baselineScores") or {}).get(layer)
    after = (change.get("scores") or {}).get(layer)
    delta = (change.get("deltas") or {}).get(layer)
    if before is None and after is None:
        return "-"
    text = f"{score_text(before)} → {score_text(after)}"
    return f"{text} ({score_text(delta, signed=True)})" if delta else text


def _outcome_table(title: str, changes: Sequence[Mapping[str, Any]]) -> list[str]:
    if not changes:
        return []
    rows = [
        f"| {cell(c.get('nodeid', ''))} | {cell(c.get('baselineOutcome'))} → {cell(c.get('outcome'))} | {_move(c, 'composite')} |"
        for c in changes
    ]
    return [
        "",
        f"**{title} ({len(changes)})**",
        "",
        "| sample | outcome | composite |",
        "|---|---|---:|",
        *rows,
    ]


def _score_table(changes: Sequence[Mapping[str, Any]]) -> list[str]:
    if not changes:
        return []
    head = "| sample | outcome | " + " | ".join(SCORE_COLUMNS) + " |"
    rows = [
        f"| {cell(c.get('nodeid', ''))} | {cell(c.get('outcome'))} | "
        + " | ".join(_move(c, layer) for layer in SCORE_COLUMNS)
        + " |"
        for c in changes
    ]
    return [
        "",
        f"**Score changes ({len(changes)})**",
        "",
        head,
        "|---|---|" + "---:|" * len(SCORE_COLUMNS),
        *rows,
    ]
