"""Plain regular expressions recognized without V8 (pytest_omk.js.regex_syntax), checked against V8."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_omk.js.regex_syntax import certainly_compiles
from pytest_omk.js.v8 import JsEngine
from tests.support.grading import ENGINE


def v8_compiles(pattern: str, flags: str) -> bool:
    return ENGINE._call("compile", pattern, flags) is None


@pytest.mark.parametrize(
    "pattern",
    [
        "",
        r"\bfoo\b",
        r"^\d{3}-\d{4}$",
        "(yes|no)",
        "(?:x)+?",
        r"[a-z-0]+",
        r"[\]\[.]",
        "[[]",
        "a{3,}?",
        r"foo\.bar",
        "é+",
        r"\/",
        "()",
        "(|)",
        "a|",
        r"[\b\n-\r]",
        "https?://x/y",
    ],
)
def test_plain_patterns_are_recognized_and_javascript_agrees(pattern: str) -> None:
    assert certainly_compiles(pattern, "i")
    assert v8_compiles(pattern, "i")


@pytest.mark.parametrize(
    "pattern",
    # invalid in JavaScript:
    [
        "a++",
        "a**",
        "a{2,1}",
        "^*",
        r"\b+",
        "[z-a]",
        "[a--]",
        "(a",
        "a)",
        "[",
        "\\",
        "a{3}{2}",
        # valid, but outside the recognized grammar (V8 decides):
        "(?<=a)b",
        "(?<n>a)",
        r"(a)\1",
        "[]",
        r"[\d-z]",
        "x{",
        "a{,3}",
        r"\u0041",
        "😀",
        "}",
    ],
)
def test_everything_else_is_left_to_v8(pattern: str) -> None:
    assert not certainly_compiles(pattern, "i")


@pytest.mark.parametrize("flags", ["u", "v", "iu", "gg", "x"])
def test_flags_that_change_the_syntax_or_are_invalid_are_left_to_v8(flags: str) -> None:
    assert not certainly_compiles("abc", flags)


TOKENS = [
    "a",
    "Z",
    "0",
    "9",
    "-",
    ",",
    "/",
    " ",
    "é",
    ".",
    "^",
    "$",
    "|",
    "(",
    ")",
    "(?:",
    "(?=",
    "[",
    "]",
    "[^",
    "*",
    "+",
    "?",
    "{",
    "}",
    "{2}",
    "{1,3}",
    "{3,1}",
    "{2,}",
    "\\",
    "\\d",
    "\\w",
    "\\s",
    "\\b",
    "\\B",
    "\\.",
    "\\-",
    "\\]",
    "\\n",
    "\\1",
    "\\x41",
    "[a-z]",
    "[z-a]",
    "[\\d-z]",
]


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.sampled_from(TOKENS), max_size=12).map("".join), st.sampled_from(["", "i", "gim", "sy", "d"])
)
def test_whatever_is_recognized_compiles_in_javascript(pattern: str, flags: str) -> None:
    if certainly_compiles(pattern, flags):
        assert v8_compiles(pattern, flags), pattern


def test_a_plain_pattern_does_not_start_v8() -> None:
    engine = JsEngine()
    try:
        assert engine.regex_error(r"^\d+ (items?|rows?)$", "i") is None
        assert engine.evaluations == 0
        assert engine._racer is None
        assert engine.regex_error("a{2,1}", "") is not None  # outside the grammar: V8 says why
        assert engine.evaluations == 1
    finally:
        engine.close()
