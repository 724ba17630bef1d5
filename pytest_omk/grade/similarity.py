"""Graders comparing the output with a reference text: ROUGE-N, BLEU-4 and edit distance.

ROUGE and BLEU work on the same tokens as upstream: the text lower-cased by V8's ``toLowerCase``, then its ASCII letter/digit
runs and single CJK ideographs (see :func:`pytest_omk.js.text.ngram_tokens`); everything else,
accented letters included, is dropped.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

from pytest_omk.grade._table import entry
from pytest_omk.grade.base import GradeContext, Grader, excerpt
from pytest_omk.js.text import js_number, levenshtein_utf16, ngram_tokens
from pytest_omk.models import AssertionBase
from pytest_omk.models.assertions import BleuMin, LevenshteinMax, RougeNMin
from pytest_omk.models.results import Reading

BLEU_ORDER = 4
Lower = Callable[..., list[str]]
"""``toLowerCase()`` of each argument, in one V8 evaluation."""


def ngrams(tokens: list[str], n: int) -> Counter[str]:
    """Counts of the ``n``-grams of ``tokens``, each written as its tokens joined by one space."""
    return Counter(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def rouge_n(candidate: str, reference: str, n: int = 1, *, lower: Lower) -> float:
    """ROUGE-N recall: clipped n-gram overlap over the reference's n-gram count (0 without any).

    ``lower`` is ``toLowerCase`` (:meth:`pytest_omk.js.v8.JsEngine.lower`), applied before tokenizing.
    """
    candidate, reference = lower(candidate, reference)
    ref = ngrams(ngram_tokens(reference), n)
    total = sum(ref.values())
    if total == 0:
        return 0.0
    cand = ngrams(ngram_tokens(candidate), n)
    overlap = sum(min(count, ref[gram]) for gram, count in cand.items())
    return overlap / total


def bleu(candidate: str, reference: str, *, lower: Lower) -> float:
    """Unsmoothed sentence BLEU-4 on a 0-1 scale, with the brevity penalty.

    sacrebleu computes the sufficient statistics (clipped n-gram matches and totals, lengths) from
    our tokens joined by spaces, with its own tokenization turned off. They are combined here as
    upstream combines them, ``BP · exp(Σ ln pₙ / 4)`` on plain ratios: sacrebleu's percentage
    arithmetic would give 1.0000000000000004 for identical texts. Fewer than four candidate
    tokens, an empty reference, or an n-gram order without a match score 0. ``lower`` is
    ``toLowerCase``, as for :func:`rouge_n`.
    """
    cand, ref = (ngram_tokens(text) for text in lower(candidate, reference))
    if len(cand) < BLEU_ORDER or not ref:
        return 0.0
    from sacrebleu.metrics.bleu import BLEU

    metric = BLEU(tokenize="none", smooth_method="none", max_ngram_order=BLEU_ORDER, effective_order=False)
    stats = metric.corpus_score([" ".join(cand)], [[" ".join(ref)]])
    if min(stats.counts) == 0 or min(stats.totals) == 0:
        return 0.0
    log_sum = 0.0
    for matched, total in zip(stats.counts, stats.totals, strict=True):
        log_sum += math.log(matched / total)
    c, r = stats.sys_len, stats.ref_len
    penalty = 1.0 if c >= r else math.exp(1 - r / c)
    return penalty * math.exp(log_sum / BLEU_ORDER)


def _fmt(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".") if x else "0"


def _score_at_least(metric: str, score: float, threshold: float, shown: str) -> Reading:
    """``score >= threshold`` as a reading for the named ``metric`` (``ROUGE-1``, ``BLEU-4``)."""
    if score >= threshold:
        return Reading.passed(f"{metric} {_fmt(score)} (at least {js_number(threshold)})")
    return Reading.failed(
        f"expected {metric} >= {js_number(threshold)} against the reference; got {_fmt(score)}; "
        f"output: {shown}"
    )


def _rouge_n_min(a: RougeNMin, ctx: GradeContext) -> Reading:
    return _score_at_least(
        f"ROUGE-{a.n}",
        rouge_n(ctx.output, a.reference, a.n, lower=ctx.engine.lower),
        a.threshold,
        ctx.quote(ctx.output),
    )


def _bleu_min(a: BleuMin, ctx: GradeContext) -> Reading:
    return _score_at_least(
        "BLEU-4", bleu(ctx.output, a.reference, lower=ctx.engine.lower), a.threshold, ctx.quote(ctx.output)
    )


def _levenshtein_max(a: LevenshteinMax, ctx: GradeContext) -> Reading:
    distance = levenshtein_utf16(ctx.output, a.reference)
    if distance <= a.value:
        return Reading.passed(f"edit distance {distance} (at most {js_number(a.value)})")
    return Reading.failed(
        f"expected an edit distance of at most {js_number(a.value)} from {excerpt(a.reference, 40)}; "
        f"got {distance}; output: {ctx.quote(ctx.output, 40)}"
    )


GRADERS: dict[type[AssertionBase], Grader] = dict(
    [
        entry(RougeNMin, _rouge_n_min),
        entry(BleuMin, _bleu_min),
        entry(LevenshteinMax, _levenshtein_max),
    ]
)
"""Similarity graders, keyed by assertion class."""
