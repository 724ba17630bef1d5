"""Paired comparison of two variants: mean composite difference with a bootstrap interval.

The rule (documented in docs/comparisons.md):

- Pairs: the samples (same file and ``sample_id``) that have a composite score in both variants.
  The difference of a pair is ``composite(other) − composite(reference)``.
- Interval: a percentile bootstrap over the pairs. :data:`RESAMPLES` (10,000) times, draw as many
  differences as there are pairs, with replacement, using ``random.Random(SEED).choices``; take the
  mean of each resample; the interval is the 2.5th and 97.5th percentile of those means (linear
  interpolation between closest ranks). The fixed seed makes a run reproducible.
- Verdict, from the interval rounded to 2 decimals (what the summary shows is what decides):
  fewer than :data:`MIN_PAIRS` pairs → ``too few samples``; lower bound > 0 → ``better``; upper
  bound < 0 → ``worse``; otherwise ``no clear difference``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_omk.grade.stats import percentile
from pytest_omk.js.numbers import js_sum, round2

RESAMPLES = 10_000
SEED = 20_240_611
CONFIDENCE = 0.95
MIN_PAIRS = 5

Verdict = Literal["better", "worse", "no clear difference", "too few samples"]


@dataclass(frozen=True)
class Interval:
    """A bootstrap interval of the mean difference (unrounded)."""

    low: float
    high: float


def bootstrap_interval(
    differences: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> Interval:
    """Percentile bootstrap interval of the mean of ``differences`` (see the module docstring)."""
    if not differences:
        raise ValueError("a bootstrap needs at least one difference")
    if resamples < 1:
        raise ValueError("resamples must be >= 1")
    rng = random.Random(seed)
    n = len(differences)
    means = sorted(js_sum(rng.choices(differences, k=n)) / n for _ in range(resamples))
    tail = (1.0 - confidence) / 2
    return Interval(percentile(means, tail), percentile(means, 1.0 - tail))


def verdict(pairs: int, low: float | None, high: float | None) -> Verdict:
    """The verdict word for ``pairs`` paired samples and a (rounded) interval."""
    if pairs < MIN_PAIRS or low is None or high is None:
        return "too few samples"
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    return "no clear difference"


def paired_comparison(
    reference: Mapping[Any, float | None],
    other: Mapping[Any, float | None],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, Any]:
    """Compare ``other`` with ``reference`` (composite by sample key) over their shared samples."""
    keys = [k for k in reference if k in other and reference[k] is not None and other[k] is not None]
    differences = [other[k] - reference[k] for k in keys]  # type: ignore[operator]
    result: dict[str, Any] = {
        "pairs": len(keys),
        "meanDifference": round2(js_sum(differences) / len(differences)) if differences else None,
        "interval": None,
    }
    low = high = None
    if len(keys) >= MIN_PAIRS:
        interval = bootstrap_interval(differences, resamples=resamples, seed=seed)
        low, high = round2(interval.low), round2(interval.high)
        result["interval"] = {"low": low, "high": high, "confidence": CONFIDENCE}
    result["verdict"] = verdict(len(keys), low, high)
    return result


def compare_variants(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """Each variant after the first, compared with the first on the composite of shared samples."""
    if len(names) < 2:
        return []

    def composites(name: str) -> dict[tuple[str, str], float | None]:
        return {
            (r["file"], r["sample_id"]): r["scores"]["composite"] for r in rows if r.get("variant") == name
        }

    reference = composites(names[0])
    comparisons = []
    for name in names[1:]:
        comparison = paired_comparison(reference, composites(name))
        comparisons.append(
            {
                "variant": name,
                "reference": names[0],
                "metric": "composite",
                **comparison,
                "method": {"resamples": RESAMPLES, "seed": SEED, "minPairs": MIN_PAIRS},
            }
        )
    return comparisons
