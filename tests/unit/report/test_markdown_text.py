"""Foreign text as inert Markdown (``report/markdown_text.py``): cells and fenced blocks."""

from __future__ import annotations

import pytest

from pytest_omk.report.markdown_text import cell, fenced


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("two\nlines\tand\r\na tab", "two lines and a tab"),
        ("a | pipe and `code`", "a \\| pipe and \\`code\\`"),
        ("\u202e~ fr- mr", "\\\\u202e\\~ fr- mr"),
        ("\x1b[2Jcleared", "\\\\x1b\\[2Jcleared"),
        ("lone\rreturn", "lone\\\\x0dreturn"),
    ],
)
def test_a_cell_is_one_line_with_unsafe_characters_made_visible(raw: str, shown: str) -> None:
    assert cell(raw) == shown


def test_a_fenced_block_keeps_lines_and_shows_unsafe_characters() -> None:
    assert fenced("one\r\ntwo \u202e~ fr- mr\n\x1b[2J") == [
        "```",
        "one",
        "two \\u202e~ fr- mr",
        "\\x1b[2J",
        "```",
    ]
