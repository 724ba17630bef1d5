"""Judge reply parsing: rubric replies are strict JSON, assertion replies may wrap the object."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_omk.judge.parse import (
    MALFORMED,
    NO_REASON,
    NO_SCORE,
    NOT_JSON,
    NOT_OBJECT,
    WRAPPED,
    JudgeReply,
    parse_assertion_reply,
    parse_rubric_reply,
)

Parse = Callable[[str], JudgeReply | str]

GOOD = '{"reasoning": "covers both points", "score": 4, "reason": "accurate and complete"}'
FENCED = '```json\n{"score": 4, "reason": "fine"}\n```'
PREFIXED = 'Here is my verdict: {"score": 2, "reason": "misses the point"} Thanks!'


@pytest.mark.parametrize("parse", [parse_rubric_reply, parse_assertion_reply])
class TestBothKinds:
    def test_valid_reply(self, parse: Parse) -> None:
        assert parse(GOOD) == JudgeReply(4, "accurate and complete")

    def test_surrounding_whitespace_is_trimmed(self, parse: Parse) -> None:
        assert parse(f"\n  {GOOD}\u00a0\n") == (4, "accurate and complete")

    def test_integer_valued_float_is_an_integer(self, parse: Parse) -> None:
        # JSON has one number type: 4.0 is the integer 4, as JavaScript's Number.isInteger says.
        assert parse('{"score": 4.0, "reason": "ok"}') == (4, "ok")

    @pytest.mark.parametrize("text", ["", "   ", "The answer is good, score 4.", "4"])
    def test_not_json(self, parse: Parse, text: str) -> None:
        assert parse(text) == NOT_JSON

    @pytest.mark.parametrize(
        "text", ['{"score": 4, "reason": "ok",}', "{score: 4}", '{"score": NaN, "reason": "x"}']
    )
    def test_malformed_json(self, parse: Parse, text: str) -> None:
        assert parse(text) == MALFORMED

    @pytest.mark.parametrize(
        ("value", "defect"),
        [
            ('"4"', 'judge reply: score "4" is not an integer 1-5'),
            ("4.5", "judge reply: score 4.5 is not an integer 1-5"),
            ("true", "judge reply: score true is not an integer 1-5"),
            ("null", "judge reply: score null is not an integer 1-5"),
            ("[4]", "judge reply: score [4] is not an integer 1-5"),
            ("1e400", "judge reply: score Infinity is not an integer 1-5"),
            ("0", "judge reply: score 0 is outside the range 1-5"),
            ("6", "judge reply: score 6 is outside the range 1-5"),
            ("-3", "judge reply: score -3 is outside the range 1-5"),
        ],
    )
    def test_bad_scores(self, parse: Parse, value: str, defect: str) -> None:
        assert parse(f'{{"score": {value}, "reason": "because"}}') == defect

    def test_missing_score(self, parse: Parse) -> None:
        assert parse('{"reason": "no score given"}') == NO_SCORE

    @pytest.mark.parametrize("reason", ['""', '"   "', '"\\u3000"', "null", "5", '["text"]'])
    def test_blank_or_non_string_reason(self, parse: Parse, reason: str) -> None:
        assert parse(f'{{"score": 3, "reason": {reason}}}') == NO_REASON

    def test_missing_reason(self, parse: Parse) -> None:
        assert parse('{"score": 3}') == NO_REASON
        assert parse('{"score": 3, "reasoning": "long analysis"}') == NO_REASON


class TestRubricIsStrict:
    def test_fenced_json_is_rejected(self) -> None:
        assert parse_rubric_reply(FENCED) == WRAPPED

    def test_prefixed_json_is_rejected(self) -> None:
        assert parse_rubric_reply(PREFIXED) == WRAPPED

    def test_wrapped_but_broken_json_is_malformed(self) -> None:
        assert parse_rubric_reply('Verdict: {"score": 4, "reason": }') == MALFORMED

    def test_not_an_object(self) -> None:
        # (An assertion reply is cut from "{" to "}", so it is always an object or malformed.)
        assert parse_rubric_reply('[{"score": 3, "reason": "x"}]') == NOT_OBJECT

    def test_reasoning_is_optional(self) -> None:
        assert parse_rubric_reply('{"score": 5, "reason": "excellent"}') == (5, "excellent")


class TestAssertionExtractsTheObject:
    def test_fenced_json_is_accepted(self) -> None:
        assert parse_assertion_reply(FENCED) == (4, "fine")

    def test_prefixed_json_is_accepted(self) -> None:
        assert parse_assertion_reply(PREFIXED) == (2, "misses the point")

    def test_greedy_span_across_two_objects_is_malformed(self) -> None:
        # First "{" to last "}" spans both objects, which is not one JSON value.
        assert (
            parse_assertion_reply('{"score": 1, "reason": "a"} and {"score": 5, "reason": "b"}') == MALFORMED
        )

    def test_extraction_keeps_validating(self) -> None:
        assert (
            parse_assertion_reply('Sure! {"score": "5", "reason": "x"}')
            == 'judge reply: score "5" is not an integer 1-5'
        )


def test_deep_nesting_is_malformed_not_a_crash() -> None:
    text = "{" + '"a":[' * 100_000 + "]" * 100_000 + "}"
    assert parse_assertion_reply(text) == MALFORMED
