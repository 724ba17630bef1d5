"""A gold dataset against the judge: the figures of one calibration item and its gates.

The pairs are the gold annotations whose sample was judged (the judge layer's score, the
reference's ``llmScore``); a gold id no collected sample has is listed as *missing*, one collected
without a judge score as *unjudged*, never dropped silently.

α's interval is a percentile bootstrap over the pairs (units, not single ratings), seeded with
:data:`SEED` so a replayed run shows the same interval; resamples where α is undefined are left
out. Pass/fail agreement is reported apart (a lenient judge has a good α and a poor true-negative
rate): a pass is a score at or above the rubric threshold, for the labels and the judge alike.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_omk.compare.agreement import (
    Pair,
    alpha_of,
    interval_alpha,
    ordinal_alpha,
    pearson,
    weighted_kappa,
    wilson,
)
from pytest_omk.grade.stats import percentile
from pytest_omk.models.calibration import Calibration, Disagreement, Rate
from pytest_omk.models.gold import GoldDataset

SEED = 20_260_53
RESAMPLES = 1000
WORK = 4_000_000
"""Most pair draws of the bootstrap in all: past 4,000 pairs it takes fewer resamples (at least
:data:`MIN_RESAMPLES`), where the interval is narrow anyway; time stays bounded."""
MIN_RESAMPLES = 100
WORST = 5


@dataclass(frozen=True)
class JudgeReading:
    """A collected sample's judge-layer score (``None``: not judged) and the judge's reasons."""

    score: float | None
    reason: str = ""


@dataclass(frozen=True)
class Gates:
    """The calibration item's thresholds (``None``: not gated)."""

    min_agreement: float | None = None
    min_tpr: float | None = None
    min_tnr: float | None = None


def alpha_interval(pairs: Sequence[Pair], seed: int = SEED) -> tuple[float, float] | None:
    """α's 95 % percentile bootstrap interval (``None``: fewer than two pairs or α never defined)."""
    n = len(pairs)
    if n < 2:
        return None
    rounds = max(MIN_RESAMPLES, min(RESAMPLES, WORK // n))
    rng = random.Random(seed)
    gold, judge = [p.gold for p in pairs], [p.judge for p in pairs]
    draws = range(n)
    alphas = []
    for _ in range(rounds):
        picked = rng.choices(draws, k=n)
        value = alpha_of([gold[i] for i in picked], [judge[i] for i in picked])
        if value is not None:
            alphas.append(value)
    if not alphas:
        return None
    alphas.sort()
    return percentile(alphas, 0.025), percentile(alphas, 0.975)


def _rate(hits: int, total: int) -> Rate | None:
    bounds = wilson(hits, total)
    if bounds is None:
        return None
    return Rate(hits=hits, total=total, rate=hits / total, low=bounds[0], high=bounds[1])


def contamination(annotator: str, judge_ids: Sequence[str]) -> str | None:
    """The reference's warning when the labels' annotator names the judge model (either way round)."""
    who = annotator.strip().lower()
    for judge in (j.lower() for j in judge_ids if j):
        if judge in who or who in judge:
            return (
                f'gold annotator "{annotator}" overlaps with judge model "{judge}": agreement is '
                "inflated; treat alpha as an upper bound only"
            )
    return None


def calibrate(
    dataset: GoldDataset,
    readings: Mapping[str, JudgeReading],
    *,
    threshold: float,
    gates: Gates,
    judge_ids: Sequence[str] = (),
    variant: str | None = None,
) -> Calibration:
    """The figures of ``dataset`` against ``readings`` (by sample id) and the gates they fail."""
    pairs: list[Pair] = []
    worst: list[Disagreement] = []
    missing: list[str] = []
    unjudged: list[str] = []
    for annotation in dataset.annotations:
        reading = readings.get(annotation.sample_id)
        if reading is None or reading.score is None:
            (missing if reading is None else unjudged).append(annotation.sample_id)
            continue
        pairs.append(Pair(annotation.score, reading.score))
        if annotation.score != reading.score:
            worst.append(Disagreement(sample_id=annotation.sample_id, gold=annotation.score,
                                      judge=reading.score, reason=reading.reason))  # fmt: skip
    worst.sort(key=lambda d: -abs(d.gold - d.judge))
    bounds = alpha_interval(pairs)
    positives = [p for p in pairs if p.gold >= threshold]
    negatives = [p for p in pairs if p.gold < threshold]
    found = Calibration(
        dataset=dataset.directory, variant=variant, annotator=dataset.metadata.annotator,
        version=dataset.metadata.version, pairs=len(pairs), alpha=interval_alpha(pairs),
        alphaLow=bounds[0] if bounds else None, alphaHigh=bounds[1] if bounds else None,
        ordinalAlpha=ordinal_alpha(pairs), kappa=weighted_kappa(pairs, dataset.scale.min, dataset.scale.max),
        pearson=pearson(pairs), threshold=threshold,
        tpr=_rate(sum(p.judge >= threshold for p in positives), len(positives)),
        tnr=_rate(sum(p.judge < threshold for p in negatives), len(negatives)),
        worst=worst[:WORST], missing=missing, unjudged=unjudged,
        contamination=contamination(dataset.metadata.annotator, judge_ids),
    )  # fmt: skip
    return found.model_copy(update={"failures": gate_failures(found, gates)})


def gate_failures(found: Calibration, gates: Gates) -> list[str]:
    """Each gate the figures fail, as a sentence with the figure and the threshold."""
    failures = []
    if gates.min_agreement is not None:
        if found.alphaLow is None:
            failures.append(f"alpha's interval is undefined ({found.pairs} pairs): --omk-min-agreement "
                            f"{gates.min_agreement:g} cannot be met")  # fmt: skip
        elif found.alphaLow < gates.min_agreement:
            failures.append(f"alpha's 95% interval lower bound {found.alphaLow:.3f} < --omk-min-agreement "
                            f"{gates.min_agreement:g}")  # fmt: skip
    for name, rate, minimum in (("TPR", found.tpr, gates.min_tpr), ("TNR", found.tnr, gates.min_tnr)):
        if minimum is None:
            continue
        if rate is None:
            failures.append(f"{name} is undefined (no gold {'pass' if name == 'TPR' else 'fail'} labels "
                            f"among the pairs): --omk-min-{name.lower()} {minimum:g} cannot be met")  # fmt: skip
        elif rate.low < minimum:
            failures.append(
                f"{name} 95% interval lower bound {rate.low:.3f} < --omk-min-{name.lower()} {minimum:g}"
            )
    return failures


def export_rows(
    dataset: GoldDataset, readings: Mapping[str, JudgeReading], threshold: float, variant: str | None
) -> list[tuple[object, ...]]:
    """``--omk-gold-export``'s rows: dataset, variant, sample, gold, judge, both pass/fail verdicts
    (judge and its verdict empty for a gold id without a judge score)."""
    rows: list[tuple[object, ...]] = []
    for annotation in dataset.annotations:
        reading = readings.get(annotation.sample_id)
        judge = None if reading is None else reading.score
        rows.append((dataset.directory, variant or "", annotation.sample_id, annotation.score,
                     "" if judge is None else judge, annotation.score >= threshold,
                     "" if judge is None else judge >= threshold))  # fmt: skip
    return rows
