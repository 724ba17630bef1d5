"""JavaScript string semantics: lengths, lower-casing, whitespace, String(), JSON.stringify, tokens."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_omk.js.text import (
    js_json_stringify,
    js_number,
    js_string,
    js_truthy,
    js_words,
    levenshtein_utf16,
    ngram_tokens,
    utf16_len,
    utf16_units,
)
from tests.support.grading import ENGINE


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("abc", 3), ("é", 1), ("e\u0301", 2), ("中文", 2), ("😀", 2), ("a😀b", 4), ("\ud800", 1)],
)
def test_utf16_len_counts_code_units(text: str, expected: int) -> None:
    assert utf16_len(text) == expected
    assert len(utf16_units(text)) == expected


def test_utf16_units_split_astral_characters_into_surrogates() -> None:
    assert list(utf16_units("a😀")) == [0x61, 0xD83D, 0xDE00]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("HELLO World", "hello world"),
        ("ΟΔΟΣ", "οδος"),  # final sigma at the end of a word
        ("ΣΑΣ ΣΕ", "σας σε"),  # initial sigma stays σ, final becomes ς
        ("Σ", "σ"),  # a lone sigma is not word-final
        ("İ", "i\u0307"),  # full mapping: dotted capital I becomes two code points
        ("\ua7dc", "\u019b"),  # Unicode 16: V8 lower-cases it, Python 3.11's str.lower does not
    ],
)
def test_v8_lower_is_javascript_to_lower_case(text: str, expected: str) -> None:
    assert ENGINE.lower(text) == [expected]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", []),
        ("  one two  ", ["one", "two"]),
        ("a\u00a0b\ufeffc\u3000d\u2028e", ["a", "b", "c", "d", "e"]),
        ("中文没有空格", ["中文没有空格"]),
        # Python's str.split() also splits at these; JavaScript's \s does not.
        ("a\x1cb", ["a\x1cb"]),
        ("a\u0085b", ["a\u0085b"]),
    ],
)
def test_js_words_split_on_javascript_whitespace(text: str, words: list[str]) -> None:
    assert js_words(text) == words


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (0.1, "0.1"),
        (123.456, "123.456"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e16, "10000000000000000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-10, "1.5e-10"),
        (5e-324, "5e-324"),
        (2**53, "9007199254740992"),
        (float(2**53), "9007199254740992"),
        (-42.0, "-42"),
        (2.0**60, "1152921504606847000"),  # past 2**53: the shortest digits, then zeros
        (12345678901234567890, "12345678901234567000"),
        (math.nan, "NaN"),
        (-math.inf, "-Infinity"),
    ],
)
def test_js_number_spells_numbers_like_javascript(value: float, text: str) -> None:
    assert js_number(value) == text


def test_js_json_stringify_is_compact_ordered_and_raw_unicode() -> None:
    assert js_json_stringify({"confirmedByUser": True}) == '{"confirmedByUser":true}'
    assert js_json_stringify({"b": 1.0, "a": [None, "é中😀"]}) == '{"b":1,"a":[null,"é中😀"]}'
    assert (
        js_json_stringify({"q": 'say "hi"\n\\', "c": "\x01\x7f"})
        == '{"q":"say \\"hi\\"\\n\\\\","c":"\\u0001\x7f"}'
    )


def test_js_json_stringify_lists_integer_like_keys_first() -> None:
    # JavaScript objects order array-index keys numerically before the others.
    value = {"b": 1, "10": 2, "2": 3, "01": 4, "-1": 5}
    assert js_json_stringify(value) == '{"2":3,"10":2,"b":1,"01":4,"-1":5}'


def test_js_json_stringify_escapes_lone_surrogates_and_keeps_pairs() -> None:
    assert js_json_stringify("\ud800x\udc00") == '"\\ud800x\\udc00"'
    assert js_json_stringify("\u2028") == '"\u2028"'
    assert js_json_stringify(math.inf) == "null"
    assert js_json_stringify("") == '""'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"a": 1}, "[object Object]"),
        ([1, None, [2, 3], "x"], "1,,2,3,x"),
        (True, "true"),
        (3.0, "3"),
        ("text", "text"),
    ],
)
def test_js_string_follows_javascript_string_conversion(value: object, text: str) -> None:
    assert js_string(value) == text


@pytest.mark.parametrize("value", [None, False, 0, 0.0, math.nan, ""])
def test_js_truthy_falsy_values(value: object) -> None:
    assert not js_truthy(value)


@pytest.mark.parametrize("value", [True, 1, -0.5, "0", " ", [], {}])
def test_js_truthy_truthy_values(value: object) -> None:
    assert js_truthy(value)


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("kitten", "sitting", 3),
        ("", "abc", 3),
        ("abc", "", 3),
        ("same", "same", 0),
        ("😀", "", 2),
        ("😀", "😁", 1),
    ],
)
def test_levenshtein_counts_utf16_edits(a: str, b: str, distance: int) -> None:
    assert levenshtein_utf16(a, b) == distance


def _reference_levenshtein(a: str, b: str) -> int:
    x, y = list(utf16_units(a)), list(utf16_units(b))
    previous = list(range(len(y) + 1))
    for i, unit in enumerate(x, 1):
        current = [i]
        for j, other in enumerate(y, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (unit != other)))
        previous = current
    return previous[-1]


@given(st.text(alphabet="ab😀ç", max_size=70), st.text(alphabet="ab😀ç", max_size=70))
def test_bit_parallel_levenshtein_equals_the_textbook_algorithm(a: str, b: str) -> None:
    assert levenshtein_utf16(a, b) == _reference_levenshtein(a, b)


def test_ngram_tokens_keep_ascii_runs_and_single_cjk_ideographs() -> None:
    assert ngram_tokens(*ENGINE.lower("Hello, WORLD 42! café")) == ["hello", "world", "42", "caf"]
    assert ngram_tokens("中文分词") == ["中", "文", "分", "词"]
    # Full-width digits, kana and ideographs beyond U+9FA5 are dropped.
    assert ngram_tokens("２ カタ 龦 x") == ["x"]
