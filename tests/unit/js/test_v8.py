"""The embedded V8: regex and case verdicts on every class where Python's rules differ from JavaScript's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_omk.js.v8 import JsEngine, JsTimeout, python_index
from tests.support.grading import ENGINE, status


@pytest.mark.parametrize(
    ("pattern", "flags", "text", "matches"),
    [
        ("k", "i", "\u212a", False),  # KELVIN SIGN: Python's re folds it, JavaScript without u does not
        ("s", "i", "ſ", False),
        ("i", "i", "İ", False),
        ("ß", "i", "ẞ", False),
        ("ω", "i", "\u2126", False),
        ("^.$", "", "😀", False),  # without u an astral character is two UTF-16 units
        ("^..$", "", "😀", True),
        ("^.$", "u", "😀", True),
        ("^[\\W]$", "", "é", True),
        ("^[\\S]+$", "", "a\u00a0", False),
        ("^[\\D]$", "", "٣", True),
        ("^\\u{3}$", "", "uuu", True),
        ("^a{,3}$", "", "a{,3}", True),
        ("^(a)?\\1b$", "", "b", True),  # a backreference to a group that did not take part: empty
        ("(?<=ab+)c", "", "abbbc", True),  # variable-length lookbehind
        ("^\\p{L}$", "u", "é", True),
        ("^\\d+$", "u", "٣٣", False),
    ],
)
def test_regex_verdicts_are_javascript_verdicts(pattern: str, flags: str, text: str, matches: bool) -> None:
    found = ENGINE.search(pattern, flags, text)
    assert (found is not None) is matches


@pytest.mark.parametrize(
    ("pattern", "compiles"),
    [("a++", False), ("a*+", False), ("\\1", True), ("\\k<x>", True), ("\\p{L}", True), ("(?<=a+)b", True)],
)
def test_what_compiles_is_what_javascript_compiles(pattern: str, compiles: bool) -> None:
    assert (ENGINE.regex_error(pattern, "") is None) is compiles


def test_lower_case_follows_javascript() -> None:
    # Final sigma at a word end; the dotted capital I lower-cases to i + combining dot.
    assert ENGINE.lower("ΣΑΣ", "İ") == ["σας", "i\u0307"]


def test_lone_surrogates_cross_the_boundary() -> None:
    assert ENGINE.lower("A\ud83d") == ["a\ud83d"]
    found = ENGINE.search("x", "", "\ud83dx")
    assert found is not None and found.start == 1


def test_sticky_matches_only_at_the_start() -> None:
    assert ENGINE.search("a", "y", "ba") is None
    assert ENGINE.search("a", "y", "ab") is not None


def test_match_index_is_converted_from_utf16() -> None:
    assert python_index("😀ab", 3) == 2
    found = ENGINE.search("b", "", "😀ab")
    assert found is not None and (found.start, found.end) == (2, 3)


def test_a_catastrophic_pattern_stops_at_the_limit_and_the_engine_stays_usable() -> None:
    engine = JsEngine(timeout=0.2)
    try:
        with pytest.raises(JsTimeout, match=r"0\.2 s limit"):
            engine.search("^(a+)+$", "", "a" * 40 + "b")
        assert engine.search("a", "", "a") is not None
    finally:
        engine.close()


def test_a_regex_assertion_past_the_limit_fails_with_the_limit_named() -> None:
    engine = JsEngine(timeout=0.2)
    try:
        from tests.support.grading import read

        reading = read({"type": "regex", "pattern": "^(a+)+$", "not": True}, "a" * 40 + "b", js=engine)
    finally:
        engine.close()
    assert reading.status == "fail" and "0.2 s limit" in reading.message


def test_contains_uses_current_unicode_case_pairs() -> None:
    # U+A7CB / U+A7DC are case pairs added after Python 3.11's Unicode 14.
    assert status({"type": "contains", "value": "\ua7dc"}, "x \u019b y") == "pass"
    assert status({"type": "regex", "pattern": "^..$", "flags": "u"}, "😀") == "fail"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40))
def test_python_lowers_ascii_exactly_as_javascript(text: str) -> None:
    assert ENGINE.lower(text) == ENGINE._call("lower", [text])


def test_ascii_text_is_lowered_without_asking_v8() -> None:
    engine = JsEngine()
    try:
        assert engine.lower("The OUTPUT", "Needle") == ["the output", "needle"]
        assert engine.evaluations == 0
    finally:
        engine.close()


def test_non_ascii_text_asks_v8_once_for_all_of_a_samples_checks() -> None:
    engine = JsEngine()
    try:
        output = "Ünïcode \ua7dc OUTPUT"
        for needle in ("A", "\u019b", "Ü", "b"):
            low_output, _ = engine.lower(output, needle)
            assert low_output == "ünïcode \u019b output"
        # The output once, "\u019b" (already lower, still non-ASCII) once, "Ü" once.
        assert engine.evaluations == 3
        assert engine.lower("Ü", "\u019b") == ["ü", "\u019b"]
        assert engine.evaluations == 3
    finally:
        engine.close()


def test_a_pattern_is_compiled_once_however_many_samples_use_it() -> None:
    engine = JsEngine()
    try:
        for _ in range(5):  # patterns outside what is recognized without V8 (js.regex_syntax)
            assert engine.regex_error("(?<=a)b", "i") is None
            assert engine.regex_error("(", "") is not None
        assert engine.evaluations == 2
        # Flags are part of what compiles: "a" with the unicode flag is a different question.
        assert engine.regex_error("\\-", "u") is not None
        assert engine.evaluations == 3
    finally:
        engine.close()
