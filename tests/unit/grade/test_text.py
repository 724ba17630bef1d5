"""Text assertions: substrings, prefixes, equality, multi-value, regex, length and word count."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.grading import read, status


@pytest.mark.parametrize(
    ("assertion", "output", "expected"),
    [
        ({"type": "contains", "value": "sql"}, "Use SQL parameters", "pass"),
        ({"type": "contains", "value": "ΟΔΟΣ"}, "η οδος", "pass"),  # final sigma both sides
        ({"type": "contains", "value": "missing"}, "Hello", "fail"),
        ({"type": "not_contains", "value": "SAFE"}, "this is safe", "fail"),
        ({"type": "not_contains", "value": "safe"}, "risky", "pass"),
        ({"type": "starts_with", "value": "hello"}, "Hello world", "pass"),
        ({"type": "starts_with", "value": "hello"}, " Hello world", "fail"),  # not trimmed
        ({"type": "ends_with", "value": "WORLD"}, "hello world", "pass"),
        ({"type": "ends_with", "value": "world"}, "hello world\n", "fail"),
        ({"type": "equals", "value": " 42 "}, "42\n", "pass"),
        ({"type": "equals", "value": "Yes"}, "yes", "fail"),  # case-sensitive
        ({"type": "equals", "value": "ok"}, "\ufeffok\u3000", "pass"),  # JavaScript trim set
        ({"type": "equals", "value": "ok"}, "ok\x1c", "fail"),  # ... which excludes U+001C
        ({"type": "not_equals", "value": "ok"}, " ok ", "fail"),
        ({"type": "not_equals", "value": "ok"}, "okay", "pass"),
        ({"type": "contains_all", "values": ["a", "B"]}, "A b", "pass"),
        ({"type": "contains_all", "values": ["a", "z"]}, "A b", "fail"),
        ({"type": "contains_any", "values": ["x", "B"]}, "a b", "pass"),
        ({"type": "contains_any", "values": ["x", "y"]}, "a b", "fail"),
    ],
)
def test_text_assertions(assertion: dict[str, Any], output: str, expected: str) -> None:
    assert status(assertion, output) == expected


@pytest.mark.parametrize(
    ("assertion", "output", "expected"),
    [
        ({"type": "min_length", "value": 2}, "😀", "pass"),  # an emoji is 2 UTF-16 units
        ({"type": "max_length", "value": 1}, "😀", "fail"),
        ({"type": "max_length", "value": 3}, "中文字", "pass"),
        ({"type": "min_length", "value": 5}, "  a  ", "pass"),  # untrimmed
        ({"type": "max_length", "value": 40}, "Hello world", "pass"),
        ({"type": "min_length", "value": 0}, "", "pass"),
        ({"type": "word_count_min", "value": 3}, "one  two\tthree", "pass"),
        ({"type": "word_count_max", "value": 1}, "中文没有空格", "pass"),  # CJK without spaces: one word
        ({"type": "word_count_max", "value": 1}, "a\u00a0b", "fail"),
        ({"type": "word_count_min", "value": 2}, "a\u0085b", "fail"),  # U+0085 is not JS whitespace
        ({"type": "word_count_max", "value": 0}, "   ", "pass"),
    ],
)
def test_length_and_word_count(assertion: dict[str, Any], output: str, expected: str) -> None:
    assert status(assertion, output) == expected


@pytest.mark.parametrize(
    ("assertion", "output", "expected"),
    [
        ({"type": "regex", "pattern": "hello"}, "HELLO", "pass"),  # default flags: i
        ({"type": "regex", "pattern": "hello", "flags": ""}, "HELLO", "pass"),  # empty flags: i too
        ({"type": "regex", "pattern": "hello", "flags": "g"}, "HELLO", "fail"),  # g replaces i
        ({"type": "regex", "pattern": "hello", "flags": "gi"}, "HELLO", "pass"),
        ({"type": "regex", "pattern": "world", "flags": "y"}, "hello world", "fail"),  # sticky: index 0
        ({"type": "regex", "pattern": "hello", "flags": "y"}, "hello world", "pass"),
        ({"type": "regex", "pattern": "done$"}, "done\n", "fail"),  # $ is not before a final \n
        ({"type": "regex", "pattern": "done$", "flags": "m"}, "done\n", "pass"),
        ({"type": "regex", "pattern": "^\\d+$"}, "١٢٣", "fail"),  # \d is ASCII-only
        ({"type": "regex", "pattern": "a.b"}, "a\rb", "fail"),  # . excludes \r
        ({"type": "regex", "pattern": "(?<year>\\d{4})-\\k<year>"}, "2024-2024", "pass"),
        ({"type": "regex", "pattern": "\\b(NO-GO|CAUTION|GO)\\b"}, "verdict: go", "pass"),
    ],
)
def test_regex_follows_javascript_semantics(assertion: dict[str, Any], output: str, expected: str) -> None:
    assert status(assertion, output) == expected


def test_not_inverts_valid_text_readings() -> None:
    assert status({"type": "contains", "value": "x", "not": True}, "abc") == "pass"
    assert status({"type": "regex", "pattern": "TODO|FIXME", "not": True}, "fix the TODO") == "fail"
    # Legacy negative aliases double-negate with not.
    assert status({"type": "not_contains", "value": "b", "not": True}, "abc") == "pass"


def test_failure_message_quotes_expectation_and_output_on_one_line() -> None:
    output = "The query looks safe to me.\nNothing to change here, it is fine as written."
    reading = read({"type": "contains", "value": "SQL"}, output)
    assert reading.status == "fail"
    assert reading.message.startswith("expected the output to contain 'SQL'; output: 'The query looks safe")
    assert "\n" not in reading.message


def test_failure_message_shows_where_a_forbidden_text_was_found() -> None:
    reading = read(
        {"type": "not_contains", "value": "password"}, "x" * 200 + " your password is hunter2 " + "y" * 200
    )
    assert reading.status == "fail"
    assert "password is hunter2" in reading.message
    assert len(reading.message) < 200


def test_negated_regex_failure_says_where_it_matched() -> None:
    reading = read({"type": "regex", "pattern": "TODO|FIXME", "not": True}, "done, except a FIXME in main")
    assert reading.status == "fail"
    assert "FIXME in main" in reading.message


def test_length_messages_name_the_bound_and_the_measure() -> None:
    reading = read({"type": "max_length", "value": 3}, "😀😀")
    assert reading.message.startswith("expected at most 3 characters (UTF-16 code units); got 4")
    assert read({"type": "word_count_min", "value": 2.5}, "a b c").message == "3 words (at least 2.5)"


def test_passing_readings_carry_a_message() -> None:
    for assertion in (
        {"type": "contains", "value": "a"},
        {"type": "equals", "value": "a"},
        {"type": "regex", "pattern": "a"},
        {"type": "contains_any", "values": ["a"]},
        {"type": "min_length", "value": 1},
    ):
        reading = read(assertion, "a")
        assert reading.status == "pass"
        assert reading.message
