"""Foreign text as one line of inert Markdown (``report/markdown.cell``)."""

from __future__ import annotations

import pytest

from pytest_omk.report.markdown import cell


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
