"""pytest-omk's own terminal lines in the terminal's width, every word kept.

A line longer than the width is broken at spaces into a first line and continuation lines, each
indented four columns further than the first (so a continuation never reads as one of the
two-space sub-lines some parts print under a line). Nothing is cut: a word longer than the width
(a long path, a node id) gets a line of its own and is left whole, so it can still be copied.
Rows of a table (:class:`TableRow`) are never broken: their table fits the width by its own rules
(:mod:`.fit`), or was asked for at full width (``-v``). docs/reporting.md states the rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

HANG = "    "
"""What a continuation line adds to the first line's own indent."""
_NARROWEST = 20
"""The fewest columns a continuation keeps for its words, whatever the width."""
_WORDS = re.compile(r" *[^ ]+")
"""Each word with the spaces before it (only a space is a place to break)."""


class TableRow(str):
    """A row of a table: :func:`wrap_line` keeps it whole (breaking it would break the columns)."""

    __slots__ = ()


def wrap_line(line: str, width: int) -> list[str]:
    """``line`` as lines of at most ``width`` columns, broken at spaces (see the module docstring).

    A line that fits, a table row, and a line with no space to break at come back as they are.
    The spaces a break falls on are dropped; the others are kept as they are.
    """
    if len(line) <= width or isinstance(line, TableRow):
        return [line]
    text = line.lstrip(" ")
    if not text:
        return [line]
    indent = line[: len(line) - len(text)]
    hang = indent + HANG
    width = max(width, len(hang) + _NARROWEST)
    first, *rest = _chunks(text)
    lines = [indent + first]
    for chunk in rest:
        if len(lines[-1]) + len(chunk) <= width:
            lines[-1] += chunk
        else:
            lines.append(hang + chunk.lstrip(" "))
    return lines


def _chunks(text: str) -> list[str]:
    """The words of ``text`` with the spaces before them. A word that starts with ``::`` stays on
    its neighbour's line: a continuation must never start with it, which GitHub's runner would
    execute as a workflow command (the escaping of foreign text makes only line-leading ``::``
    inert, and it runs before the wrapping; docs/security.md, "CI outputs")."""
    chunks: list[str] = []
    for word in _WORDS.findall(text):
        if chunks and word.lstrip(" ").startswith("::"):
            chunks[-1] += word
        else:
            chunks.append(word)
    return chunks


def wrap_lines(lines: Iterable[str], width: int) -> list[str]:
    """Each of ``lines`` through :func:`wrap_line`, in order."""
    return [part for line in lines for part in wrap_line(line, width)]
