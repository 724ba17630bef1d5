"""The ``omk scores`` table in the terminal's width, every sample id whole.

By default the table fits the terminal (80 columns when pytest cannot tell). It tries, in order,
until the table fits: the full column names; short ones; the node ids without the part every row
shares (the file, or the directories above the files), said once above the table; without the
columns that hold the same value in every row (``judge`` all ``-``, every sample replayed), said
once below it; one space between columns; and last each sample's node id on a line of its own
above its values. The id is never cut. ``-v`` shows everything at full width.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_omk.report.wrap import TableRow, wrap_line

SHORT_HEADERS = {"composite": "comp", "behavior": "behav", "replayed": "replay", "latency": "time"}
_KEEP = ("sample", "outcome")
"""Columns never dropped for holding one value: the id, and the outcome (the reason to look)."""

Table = list[list[str]]


def _render(table: Sequence[Sequence[str]], left: int, gap: str = "  ") -> list[str]:
    """Rows joined: the first ``left`` columns left-aligned, the others right-aligned (each a
    :class:`TableRow`, which the terminal's wrapping keeps whole)."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines: list[str] = []
    for row in table:
        cells = [
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append(TableRow(gap.join(cells).rstrip()))
    return lines


def common_prefix(ids: Sequence[str]) -> str:
    """What every node id starts with, up to a ``::`` or ``/`` boundary, leaving each id's sample."""
    if not ids:
        return ""
    first, last = min(ids), max(ids)
    shared = next(
        (i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), min(len(first), len(last))
    )
    prefix = first[:shared]
    cut = max(prefix.rfind("::") + 2 if "::" in prefix else 0, prefix.rfind("/") + 1)
    # Never the whole id (ids that end inside the shared part): back to the directory above.
    while cut and any(len(i) <= cut for i in ids):
        cut = prefix.rfind("/", 0, cut - 1) + 1
    return prefix[:cut]


def _without_prefix(table: Table, notes: list[str]) -> Table:
    prefix = common_prefix([row[0] for row in table[1:]])
    if not prefix:
        return table
    notes.insert(0, f"(node ids below start with {prefix})")
    return [table[0], *([row[0][len(prefix) :], *row[1:]] for row in table[1:])]


def _without_constant_columns(table: Table, notes: list[str]) -> Table:
    header, rows = table[0], table[1:]
    constant = [
        i
        for i, name in enumerate(header)
        if name not in _KEEP and len(rows) > 1 and len({r[i] for r in rows}) == 1
    ]
    if not constant:
        return table
    notes.append("(every sample: " + ", ".join(f"{header[i]} {rows[0][i]}" for i in constant) + ")")
    return [[cell for i, cell in enumerate(row) if i not in constant] for row in table]


def _stacked(table: Table, left: int) -> list[str]:
    """Each node id on its own line, its values on the next, indented (the id is never cut)."""
    values = _render([["", *row[1:]] for row in table], left, gap=" ")
    lines = [values[0]]
    for row, line in zip(table[1:], values[1:], strict=True):
        lines += [TableRow(row[0]), line]
    return lines


def fit_table(table: Table, *, width: int, wide: bool, left: int = 2) -> list[str]:
    """Render ``table`` (header first) within ``width`` columns unless ``wide``; notes (what the
    rows share) come as lines of their own, above or below."""
    lines = _render(table, left)
    if wide or max(map(len, lines)) <= width:
        return lines
    notes: list[str] = []
    table = [[SHORT_HEADERS.get(c, c) for c in table[0]], *table[1:]]
    for step in (lambda t: t, lambda t: _without_prefix(t, notes)):
        table = step(table)
        lines = _render(table, left)
        if max(map(len, lines)) <= width:
            return _with_notes(lines, notes, width)
    kept_notes = list(notes)
    narrow = _without_constant_columns(table, notes)
    for gap in ("  ", " "):
        lines = _render(narrow, left, gap)
        if max(map(len, lines)) <= width:
            return _with_notes(lines, notes, width)
    # Still too wide: the ids are; give each its own line, and its values (all of them) the next.
    return _with_notes(_stacked(table, left), kept_notes, width)


def _with_notes(lines: list[str], notes: list[str], width: int) -> list[str]:
    above = [n for n in notes if n.startswith("(node ids")]
    below = [n for n in notes if n not in above]
    return [
        *(part for n in above for part in wrap_line(n, width)),
        *lines,
        *(part for n in below for part in wrap_line(n, width)),
    ]
