"""Agreement between two raters on a numeric scale: the gold labels and the judge.

The three figures the format's owner reports (``omk eval gold compare``), computed the same way so
that the same pairs give the same numbers (tests/parity/test_gold_parity.py holds them equal to four
decimals), and one it lacks:

- Krippendorff's α with the interval distance δ²(c, k) = (c − k)², two coders, every unit rated by
  both: α = 1 − D_o / D_e, D_o the mean squared difference within units, D_e the mean squared
  difference between any two of the 2N ratings pooled. Undefined (``None``) when the pooled ratings
  have no variance.
- Ordinal α: Krippendorff's ordinal distance between two values is the count of pooled ratings from
  one to the other less half of each end; that is the difference of the two values' midranks, so
  ordinal α is the interval α of the ratings replaced by their midranks in the pooled ratings.
- Cohen's κ with quadratic weights w = (i − j)² / (max − min)² on the dataset's scale; undefined
  when the expected agreement is complete.
- Pearson's r; undefined with fewer than two pairs or a rater without variance.

Each sum is written in closed form (O(N), not over every pair of distinct values), so a gold set of
100,000 labels costs milliseconds. Pure computation: no file, no option.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Pair:
    """One unit rated twice: the gold label ``gold`` and the judge's ``judge``."""

    gold: float
    judge: float


def interval_alpha(pairs: Sequence[Pair]) -> float | None:
    """Krippendorff's α with the interval distance (``None``: undefined)."""
    return alpha_of([p.gold for p in pairs], [p.judge for p in pairs])


def ordinal_alpha(pairs: Sequence[Pair]) -> float | None:
    """Krippendorff's α with the ordinal distance (``None``: undefined)."""
    ranks = midranks([*(p.gold for p in pairs), *(p.judge for p in pairs)])
    n = len(pairs)
    return alpha_of([ranks[p.gold] for p in pairs], [ranks[p.judge] for p in pairs]) if n else None


def alpha_of(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Interval α of the paired ratings ``a[i]``, ``b[i]`` (``None``: undefined)."""
    n = len(a)
    if n == 0 or len({*a, *b}) < 2:  # one value throughout: nothing to disagree about
        return None
    mass = 2 * n
    observed = sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) * 2 / mass
    pooled_sum = math.fsum(a) + math.fsum(b)
    pooled_squares = math.fsum(x * x for x in a) + math.fsum(y * y for y in b)
    # Σ_c Σ_k n_c n_k (c − k)² over the pooled ratings, in closed form.
    spread = 2 * mass * pooled_squares - 2 * pooled_sum * pooled_sum
    expected = spread / (mass * (mass - 1))
    if expected <= 0 or not math.isfinite(expected):
        return None
    return 1 - observed / expected


def midranks(values: Sequence[float]) -> dict[float, float]:
    """Each distinct value's midrank among ``values`` (ties share the mean of their ranks)."""
    counts: dict[float, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    ranks, below = {}, 0
    for value in sorted(counts):
        ranks[value] = below + counts[value] / 2
        below += counts[value]
    return ranks


def weighted_kappa(pairs: Sequence[Pair], low: float, high: float) -> float | None:
    """Cohen's κ with quadratic weights on the scale ``low``..``high`` (``None``: undefined)."""
    n, span = len(pairs), high - low
    if n == 0 or span <= 0 or len({*(p.gold for p in pairs), *(p.judge for p in pairs)}) < 2:
        return None  # both raters give one and the same value: chance agrees completely
    span2 = span * span
    observed = 1 - math.fsum((p.gold - p.judge) ** 2 for p in pairs) / span2 / n
    sum_a, sum_b = math.fsum(p.gold for p in pairs), math.fsum(p.judge for p in pairs)
    sq_a, sq_b = math.fsum(p.gold**2 for p in pairs), math.fsum(p.judge**2 for p in pairs)
    # Σ_i Σ_j (a_i − b_j)² over every gold label with every judge score, in closed form.
    cross = n * sq_a + n * sq_b - 2 * sum_a * sum_b
    expected = 1 - cross / span2 / (n * n)
    return (observed - expected) / (1 - expected)


def pearson(pairs: Sequence[Pair]) -> float | None:
    """Pearson's r (``None``: fewer than two pairs, or a rater without variance)."""
    n = len(pairs)
    if n < 2 or len({p.gold for p in pairs}) < 2 or len({p.judge for p in pairs}) < 2:
        return None
    mean_a = math.fsum(p.gold for p in pairs) / n
    mean_b = math.fsum(p.judge for p in pairs) / n
    cov = math.fsum((p.gold - mean_a) * (p.judge - mean_b) for p in pairs)
    var_a = math.fsum((p.gold - mean_a) ** 2 for p in pairs)
    var_b = math.fsum((p.judge - mean_b) ** 2 for p in pairs)
    return cov / math.sqrt(var_a * var_b)


Z95 = 1.959963984540054
"""The standard normal's 97.5th percentile: a two-sided 95 % interval."""


def wilson(successes: int, trials: int) -> tuple[float, float] | None:
    """Wilson's 95 % score interval of a proportion (``None`` without trials)."""
    if trials <= 0:
        return None
    p, z2 = successes / trials, Z95 * Z95
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def replicate_alpha(units: Sequence[Sequence[float]]) -> float | None:
    """Krippendorff's interval α of units each rated several times (a judge's replicates of one
    sample's dimension): units with fewer than two ratings are not pairable and left out.

    D_o sums, per unit, the squared differences of its ordered pairs of ratings over m_u − 1; D_e the
    same over every ordered pair of the pooled ratings; α = 1 − (n − 1)·ΣD_o / ΣD_e with n the pooled
    count. ``None`` when nothing is pairable or the pooled ratings have no variance.
    """
    pairable = [list(u) for u in units if len(u) >= 2]
    pooled = [v for u in pairable for v in u]
    n = len(pooled)
    if n < 2 or len(set(pooled)) < 2:
        return None
    within = math.fsum(
        2 * (len(u) * math.fsum(v * v for v in u) - math.fsum(u) ** 2) / (len(u) - 1) for u in pairable
    )
    between = 2 * (n * math.fsum(v * v for v in pooled) - math.fsum(pooled) ** 2)
    return 1 - (n - 1) * within / between
