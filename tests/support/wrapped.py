"""What a run printed with pytest-omk's wrapped lines joined again, for tests that match whole lines.

pytest-omk breaks its own long lines at spaces to the terminal's width, each continuation line
indented four columns further than the line it continues (:mod:`pytest_omk.report.wrap`). A test
that matches a whole line matches it here: :func:`unwrapped` joins each continuation to its line
with one space and writes every run of spaces as one, in the lines and in the patterns alike (a
break drops the spaces it falls on, one or two). Every word must still be there, in order.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pytest_omk.report.wrap import HANG


def _squeeze(text: str) -> str:
    body = text.lstrip(" ")
    return text[: len(text) - len(body)] + " ".join(body.split())


def joined_lines(lines: Sequence[str]) -> list[str]:
    """``lines`` with each continuation line (four columns deeper than the line it continues)
    joined to that line, and runs of spaces after the indent written as one."""
    out: list[str] = []
    indent = 0
    for line in lines:
        body = line.lstrip(" ")
        if out and out[-1].strip() and body and len(line) - len(body) == indent + len(HANG):
            out[-1] = f"{out[-1]} {body}"
            continue
        out.append(line)
        indent = len(line) - len(body)
    return [_squeeze(line) for line in out]


class Unwrapped(pytest.LineMatcher):
    """A ``LineMatcher`` over joined lines whose patterns are squeezed the same way."""

    def fnmatch_lines(self, lines2: Sequence[str], *, consecutive: bool = False) -> None:
        """Match ``lines2`` (runs of spaces in them written as one) in the joined lines."""
        super().fnmatch_lines([_squeeze(p) for p in lines2], consecutive=consecutive)

    def no_fnmatch_line(self, pat: str) -> None:
        """No joined line matches ``pat`` (runs of spaces in it written as one)."""
        super().no_fnmatch_line(_squeeze(pat))


def unwrapped(printed: pytest.RunResult | str | Sequence[str]) -> Unwrapped:
    """The run's stdout (or the text, or the lines) with pytest-omk's wrapped lines joined."""
    if isinstance(printed, pytest.RunResult):
        lines: Sequence[str] = printed.outlines
    elif isinstance(printed, str):
        lines = printed.splitlines()
    else:
        lines = printed
    return Unwrapped(joined_lines(lines))
