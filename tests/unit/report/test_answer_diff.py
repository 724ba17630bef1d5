"""Re-record review: the changed answers and their line diff (terminal lines, Markdown section)."""

from __future__ import annotations

from pytest_omk.report.answer_diff import answer_diff, markdown_section, terminal_lines
from pytest_omk.report.markdown_text import fenced


def test_answer_diff_and_sections() -> None:
    assert answer_diff("a\nb\nc", "a\nB\nc") == [(" ", "a"), ("-", "b"), ("+", "B"), (" ", "c")]
    samples = [
        {"nodeid": "e::s", "execution": {"output": "new ```", "previousOutput": "old"}},
        {"nodeid": "e::t", "execution": {"output": "x"}},
    ]
    assert terminal_lines(samples) == ["answers changed by re-recording: 1", "  e::s"]
    section = markdown_section(samples)
    assert "````diff" in section and "-old" in section and "+new ```" in section
    assert fenced("a\x1bb") == ["```", "a\\x1bb", "```"]  # made visible, as in every sink
