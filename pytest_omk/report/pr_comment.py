"""The Markdown section made for a pull-request comment: what changed against ``--omk-baseline``.

Newly failing samples, newly passing ones, the samples whose scores moved, then how many did not
change. Every list is in node-id order and the section holds no time or duration, so the same two
runs give the same text byte for byte: a bot can find its comment by the marker line and replace it
instead of adding another. It is rendered from the report's ``baseline`` section (and, with
``--omk-known-failures=xfail``, the samples' ``knownFailure``).

GitHub refuses a comment body over 65,536 characters, and the whole comment is lost, exactly when
many samples broke: the section is kept to :data:`PR_COMMENT_CHARS` by dropping rows from the end
(the score changes first, then the newly passing, then the newly failing), each table that lost
rows saying how many are not shown. Which rows stay depends only on the inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_omk.report.markdown_text import cell
from pytest_omk.report.view import SCORE_COLUMNS, Doc, score_text

MARKER = "<!-- pytest-omk:pr-comment -->"
"""The first line of the section: what a bot searches its earlier comment for."""
_FAILING = ("failed", "error")
PR_COMMENT_CHARS = 65_536
"""GitHub's limit for a comment body, in characters; the section from :data:`MARKER` on fits it."""
_STILL = (*_FAILING, "xfailed")
"""Not a newly passing sample: a known failure that fails again is ``xfailed``."""


def pr_comment_section(document: Doc, *, limit: int = PR_COMMENT_CHARS) -> list[str]:
    """The section's lines (empty without a baseline), at most ``limit`` characters from the marker."""
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
    head = [
        "",
        MARKER,
        "### Against the baseline",
        "",
        f"Compared with {cell(baseline.get('path', ''))}: {baseline.get('matched', 0)} samples matched, "
        f"{baseline.get('new', 0)} new, {baseline.get('notRun', 0)} not run.",
    ]
    tables = (
        (
            "Newly failing",
            ["| sample | outcome | composite |", "|---|---|---:|"],
            [_outcome_row(c) for c in failing],
        ),
        (
            "Newly passing",
            ["| sample | outcome | composite |", "|---|---|---:|"],
            [_outcome_row(c) for c in passing],
        ),
        ("Score changes", _SCORE_HEAD, [_score_row(c) for c in moved]),
    )

    known = _known(document)

    def section(kept: int) -> list[str]:
        lines = list(head)
        for title, table_head, rows in tables:
            lines += _table(title, table_head, rows, max(kept, 0))
            kept -= len(rows)
        return [*lines, "", f"{unchanged} unchanged.", *known]

    return _fitted(section, sum(len(rows) for _, _, rows in tables), limit)


def _fitted(section: Callable[[int], list[str]], total: int, limit: int) -> list[str]:
    """``section(kept)`` for the most rows kept that fit ``limit`` (found by halving), or cut."""
    if _size(full := section(total)) <= limit:
        return full
    low, high = 0, total - 1  # section(low) is tried last when nothing fits
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if _size(section(middle)) <= limit else (low, middle - 1)
    lines = section(low)
    while lines and _size(lines) > limit:  # even without rows (a huge baseline path): cut lines
        lines = lines[:-1]
    return lines


def _size(lines: list[str]) -> int:
    """Characters from the marker line on (the first line is the blank before it)."""
    return len("\n".join(lines[1:]))


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


def _outcome_row(change: Mapping[str, Any]) -> str:
    return (
        f"| {cell(change.get('nodeid', ''))} | {cell(change.get('baselineOutcome'))} → "
        f"{cell(change.get('outcome'))} | {_move(change, 'composite')} |"
    )


_SCORE_HEAD = [
    "| sample | outcome | " + " | ".join(SCORE_COLUMNS) + " |",
    "|---|---|" + "---:|" * len(SCORE_COLUMNS),
]


def _score_row(change: Mapping[str, Any]) -> str:
    moves = " | ".join(_move(change, layer) for layer in SCORE_COLUMNS)
    return f"| {cell(change.get('nodeid', ''))} | {cell(change.get('outcome'))} | {moves} |"


def _table(title: str, head: list[str], rows: Sequence[str], kept: int) -> list[str]:
    """The titled table of the first ``kept`` rows, then how many more are not shown."""
    if not rows:
        return []
    lines = ["", f"**{title} ({len(rows)})**"]
    if kept > 0:
        lines += ["", *head, *rows[:kept]]
    if kept < len(rows):
        lines += [
            "",
            f"_{len(rows) - min(kept, len(rows))} more not shown: a comment is limited to "
            f"{PR_COMMENT_CHARS:,} characters. The JSON or HTML report lists every sample._",
        ]
    return lines
