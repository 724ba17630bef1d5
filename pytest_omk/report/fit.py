"""The ``omk scores`` table in the terminal's width.

By default the table fits the terminal (80 columns when pytest cannot tell): first with full column
names, then with short ones, then with the sample column shortened in its middle (its file part),
keeping the sample id at its end readable. ``-v`` shows everything at full width.
"""

from __future__ import annotations

from collections.abc import Sequence

SHORT_HEADERS = {"composite": "comp", "behavior": "behav", "replayed": "replay", "latency": "time"}
MIN_SAMPLE_WIDTH = 16
_GAP = "  "


def _render(table: Sequence[Sequence[str]], left: int) -> list[str]:
    """Rows joined: the first ``left`` columns left-aligned, the others right-aligned."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = []
    for row in table:
        cells = [
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append(_GAP.join(cells).rstrip())
    return lines


def _shorten(text: str, width: int) -> str:
    """``text`` in ``width`` characters, its middle replaced by ``…`` (the tail is the sample id)."""
    if len(text) <= width:
        return text
    # Keep the sample id whole when it fits beside a few characters of the file.
    sample_id = text.rpartition("::")[2]
    tail = min(len(sample_id) + 2, width - 5) if len(sample_id) + 2 < len(text) else width * 2 // 3
    tail = max(tail, width * 2 // 3)
    head = width - tail - 1
    return text[:head] + "…" + text[len(text) - tail :]


def fit_table(table: list[list[str]], *, width: int, wide: bool, left: int = 2) -> list[str]:
    """Render ``table`` (header first) within ``width`` columns unless ``wide``."""
    lines = _render(table, left)
    if wide or max(map(len, lines)) <= width:
        return lines
    short = [[SHORT_HEADERS.get(c, c) for c in table[0]], *table[1:]]
    lines = _render(short, left)
    overflow = max(map(len, lines)) - width
    if overflow <= 0:
        return lines
    first = max(len(row[0]) for row in short)
    target = max(MIN_SAMPLE_WIDTH, first - overflow)
    return _render([[_shorten(row[0], target), *row[1:]] for row in short], left)
