"""Small statistics with the project's rounding: means to 2 decimals, SDs to 3 (omk-semantics §10.5).

Rounding is half-up on the exact binary value, like JavaScript's ``Number(x.toFixed(n))`` and
:func:`pytest_omk.grade.scoring.round2`; Python's ``round`` (banker's rounding) would differ on ties.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from pytest_omk.js.numbers import js_sum, round2, sample_sd


def present(values: Iterable[float | None]) -> list[float]:
    """The values that are not ``None`` (a missing score is left out, never counted as 0)."""
    return [v for v in values if v is not None]


def mean2(values: Iterable[float | None]) -> float | None:
    """Mean of the present values, rounded to 2 decimals; ``None`` when none is present."""
    observed = present(values)
    return round2(js_sum(observed) / len(observed)) if observed else None


def sd3(values: Iterable[float | None]) -> float | None:
    """Sample standard deviation (n − 1) of the present values, 3 decimals; ``None`` below 2 values."""
    return sample_sd(present(values))


def percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted values, interpolating linearly between closest ranks.

    Position ``q·(n − 1)`` in the sorted list (numpy's default "linear" method, and
    ``statistics.quantiles(method="inclusive")``).
    """
    if not ordered:
        raise ValueError("percentile of no values")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} is outside 0..1")
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    fraction = position - low
    return ordered[low] + (ordered[high] - ordered[low]) * fraction
