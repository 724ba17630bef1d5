"""ROUGE-N, BLEU-4 (via sacrebleu) and edit distance against a reference text."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from pytest_omk.grade.similarity import bleu, rouge_n
from pytest_omk.js.text import ngram_tokens
from tests.support.grading import ENGINE, read, status


def _grams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def formula_bleu(candidate: str, reference: str) -> float:
    """The unsmoothed BLEU-4 formula of the semantics document §7, written out directly."""
    cand, ref = (ngram_tokens(text) for text in ENGINE.lower(candidate, reference))
    if not cand or not ref:
        return 0.0
    log_sum = 0.0
    for n in range(1, 5):
        cand_grams, ref_grams = _grams(cand, n), _grams(ref, n)
        total = sum(cand_grams.values())
        overlap = sum(min(count, ref_grams[gram]) for gram, count in cand_grams.items())
        if total == 0 or overlap == 0:
            return 0.0
        log_sum += math.log(overlap / total)
    penalty = 1.0 if len(cand) >= len(ref) else math.exp(1 - len(ref) / len(cand))
    return penalty * math.exp(log_sum / 4)


BLEU_CASES = [
    ("the cat sat on the mat today", "the cat sat on a mat today"),
    ("the quick brown fox jumps", "the quick brown fox jumps over the lazy dog"),  # brevity penalty
    (
        "the quick brown fox jumps over the lazy dog and then the cat",
        "the quick brown fox jumps over the lazy dog",
    ),
    ("今天天气很好我们去公园散步", "今天天气不错我们去公园散步吧"),
    (
        "Always use parameterized queries: they prevent SQL injection.",
        "Use parameterized queries because they prevent SQL injection attacks.",
    ),
    ("a a a a a a", "a a a a"),  # clipping
    ("café résumé déjà vu", "café résumé déjà vu"),  # accents split words: caf r sum d j vu
    ("one two three four", "one two three four"),
]


@pytest.mark.parametrize(("candidate", "reference"), BLEU_CASES)
def test_bleu_equals_the_documented_formula(candidate: str, reference: str) -> None:
    assert bleu(candidate, reference, lower=ENGINE.lower) == formula_bleu(candidate, reference)


def test_bleu_cases_are_not_trivial() -> None:
    scores = [bleu(c, r, lower=ENGINE.lower) for c, r in BLEU_CASES]
    assert all(s > 0 for s in scores)
    assert scores[-1] == 1.0
    assert scores[1] == pytest.approx(math.exp(1 - 9 / 5))


@pytest.mark.parametrize(
    ("candidate", "reference"),
    [
        ("a b c", "a b c"),  # fewer than 4 tokens never scores
        ("a b c d e", "a b c x d e"),  # no 4-gram in common
        ("", "some reference text here"),
        ("é à ü ö ñ", "é à ü ö ñ"),  # accented letters are not tokens at all
    ],
)
def test_bleu_degenerate_cases_score_zero(candidate: str, reference: str) -> None:
    assert bleu(candidate, reference, lower=ENGINE.lower) == formula_bleu(candidate, reference) == 0.0


@pytest.mark.parametrize(
    ("candidate", "reference", "n", "expected"),
    [
        ("the cat", "the cat sat", 1, 2 / 3),
        ("the cat", "the cat sat", 2, 1 / 2),
        ("the the the", "the cat", 1, 1 / 2),  # clipped overlap
        ("the cat sat", "the cat", 3, 0.0),  # the reference has no trigram
        ("THE, Cat!", "the cat", 1, 1.0),
        ("我爱北京", "我爱上海", 1, 1 / 2),  # CJK ideographs are single tokens
        ("?!", "...", 1, 0.0),
    ],
)
def test_rouge_n_recall(candidate: str, reference: str, n: int, expected: float) -> None:
    assert rouge_n(candidate, reference, n, lower=ENGINE.lower) == pytest.approx(expected)


def test_rouge_and_bleu_assertions_use_their_default_threshold() -> None:
    assert status({"type": "rouge_n_min", "reference": "alpha beta"}, "alpha gamma") == "pass"  # 0.5 >= 0.5
    assert status({"type": "rouge_n_min", "reference": "alpha beta gamma"}, "alpha") == "fail"
    assert (
        status({"type": "rouge_n_min", "reference": "alpha beta", "n": 2, "threshold": 1}, "alpha beta")
        == "pass"
    )
    text = "the cat sat on the mat today"
    assert status({"type": "bleu_min", "reference": text}, text) == "pass"
    assert status({"type": "bleu_min", "reference": text}, "the cat") == "fail"
    assert status({"type": "bleu_min", "reference": "hi there", "threshold": 0}, "hi") == "pass"


def test_similarity_failure_message() -> None:
    reading = read({"type": "rouge_n_min", "reference": "alpha beta gamma", "threshold": 0.9}, "alpha")
    assert reading.message.startswith(
        "expected ROUGE-1 >= 0.9 against the reference; got 0.3333; output: 'alpha'"
    )


@pytest.mark.parametrize(
    ("output", "value", "expected"),
    [
        ("hello", 0, "pass"),
        ("héllo😀", 2, "fail"),  # é for e (1) plus an emoji (2 UTF-16 units)
        ("héllo😀", 3, "pass"),
        ("HELLO", 4, "fail"),  # case counts
    ],
)
def test_levenshtein_max(output: str, value: int, expected: str) -> None:
    assert status({"type": "levenshtein_max", "reference": "hello", "value": value}, output) == expected


def test_not_inverts_similarity_readings() -> None:
    assert status({"type": "levenshtein_max", "reference": "abc", "value": 0, "not": True}, "abd") == "pass"
