"""pytest-omk's own terminal lines wrap at spaces to the width, every word kept whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_omk.report.wrap import HANG, TableRow, wrap_line, wrap_lines
from tests.support.wrapped import joined_lines

NOTE = (
    "omk: CI is set, so ini key omk_record_mode = none is ignored and every call replays "
    "(--omk-record-mode or OMK_RECORD_MODE records in CI)"
)


def test_a_line_that_fits_is_left_as_it_is() -> None:
    assert wrap_line("model calls: 0 live, 14 replayed  cost: $0.009", 80) == [
        "model calls: 0 live, 14 replayed  cost: $0.009"
    ]
    assert wrap_line("x" * 80, 80) == ["x" * 80]
    assert wrap_line("", 80) == [""]


def test_a_long_line_breaks_at_spaces_with_its_continuations_indented() -> None:
    assert wrap_line(NOTE, 80) == [
        "omk: CI is set, so ini key omk_record_mode = none is ignored and every call",
        "    replays (--omk-record-mode or OMK_RECORD_MODE records in CI)",
    ]


def test_an_indented_line_keeps_its_indent_and_hangs_further() -> None:
    line = "  model under test: 7 calls (0 live, 7 replayed), tokens 275 in / 196 out, $0.00016"
    assert wrap_line(line, 80) == [
        "  model under test: 7 calls (0 live, 7 replayed), tokens 275 in / 196 out,",
        "      $0.00016",
    ]


def test_a_wider_terminal_gets_fewer_lines() -> None:
    assert wrap_line(NOTE, 200) == [NOTE]
    assert len(wrap_line(NOTE, 80)) == 2 and len(wrap_line(NOTE, 40)) == 5
    assert all(len(part) <= 40 for part in wrap_line(NOTE, 40))


def test_a_word_longer_than_the_width_is_never_cut() -> None:
    path = "/tmp/" + "very-long-directory-name/" * 5 + "baseline.json"
    parts = wrap_line(f"baseline {path}: 3 samples matched, 0 new, 0 not run", 80)
    assert parts == ["baseline", f"    {path}:", "    3 samples matched, 0 new, 0 not run"]
    assert "…" not in "".join(parts) and "..." not in "".join(parts)


def test_a_table_row_is_kept_whole() -> None:
    row = TableRow("sample  " + "  ".join(["passed", "5.00"] * 12))
    assert len(row) > 80
    assert wrap_line(row, 80) == [row]


def test_field_separators_inside_a_line_are_kept_and_dropped_at_a_break() -> None:
    line = "samples: 12  passed 9  failed 2  error 1  skipped 3 (2 × no executor configured; 1 × budget)"
    parts = wrap_line(line, 60)
    assert parts[0] == "samples: 12  passed 9  failed 2  error 1  skipped 3 (2 × no"
    assert all(not p.endswith(" ") and not p[len(HANG) :].startswith(" ") for p in parts[1:])


def test_a_continuation_never_starts_a_github_workflow_command() -> None:
    # Foreign text is made inert only where a line starts with "::" (before the wrapping).
    line = (
        "judge: http://127.0.0.1:1 refused response_format json_schema (bad request "
        + "x" * 20
        + " ::error file=a.py::pwned)"
    )
    parts = wrap_line(line, 80)
    assert len(parts) == 2 and parts[1] == "    " + "x" * 20 + " ::error file=a.py::pwned)"
    assert not any(part.lstrip().startswith("::") for part in parts)


def test_a_line_of_spaces_is_left_alone() -> None:
    assert wrap_line(" " * 100, 80) == [" " * 100]


def test_wrap_lines_keeps_the_order() -> None:
    assert wrap_lines(["a", NOTE, "b"], 80) == ["a", *wrap_line(NOTE, 80), "b"]


words = st.text(alphabet="abcdefghij$.,:;()-/", min_size=1, max_size=30) | st.just("::error")


@given(
    indent=st.integers(min_value=0, max_value=6),
    parts=st.lists(words, min_size=1, max_size=40),
    gaps=st.lists(st.sampled_from([" ", "  "]), min_size=40, max_size=40),
    width=st.integers(min_value=40, max_value=120),
)
def test_every_word_survives_in_order_and_no_line_is_wider_than_needed(
    indent: int, parts: list[str], gaps: list[str], width: int
) -> None:
    line = " " * indent + "".join(word + gap for word, gap in zip(parts, gaps, strict=False)).rstrip()
    wrapped = wrap_line(line, width)
    assert " ".join(wrapped).split() == line.split()
    assert wrapped[0].startswith(" " * indent)
    for part in wrapped:
        # Only a word that alone is too wide may pass the width, and then it stands alone (with
        # the words that start with "::" after it, which never start a line).
        others = part.split()[1:]
        assert len(part) <= width or all(word.startswith("::") for word in others)
    for part in wrapped[1:]:
        assert part.startswith(" " * indent + HANG) and part[indent + len(HANG)] != " "
        assert not part.lstrip().startswith("::")
    # What tests/support/wrapped.py joins again is the line, runs of spaces as one.
    assert joined_lines([*wrapped, "next"]) == [" " * indent + " ".join(line.split()), "next"]
