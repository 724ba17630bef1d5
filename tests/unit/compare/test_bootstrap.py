"""The paired bootstrap comparison of two variants, checked against an independent computation."""

from __future__ import annotations

import random
import statistics
from decimal import ROUND_HALF_UP, Decimal

import pytest

from pytest_omk.compare.bootstrap import (
    MIN_PAIRS,
    RESAMPLES,
    SEED,
    bootstrap_interval,
    compare_variants,
    paired_comparison,
    verdict,
)


def _half_up(x: float) -> float:
    return float(Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _independent_interval(differences: list[float]) -> tuple[float, float]:
    """The documented procedure, written differently: statistics.fmean and statistics.quantiles."""
    rng = random.Random(SEED)
    means = [statistics.fmean(rng.choices(differences, k=len(differences))) for _ in range(RESAMPLES)]
    cuts = statistics.quantiles(means, n=40, method="inclusive")
    return _half_up(cuts[0]), _half_up(cuts[-1])


def test_interval_matches_an_independent_computation() -> None:
    differences = [0.5, 1.0, -0.25, 0.75, 0.0, 1.5, 0.25]
    interval = bootstrap_interval(differences)
    assert (_half_up(interval.low), _half_up(interval.high)) == _independent_interval(differences)
    assert interval.low <= statistics.fmean(differences) <= interval.high


def test_interval_is_reproducible_and_seed_dependent() -> None:
    differences = [0.3, -0.1, 0.8, 0.2, 0.0, 0.4]
    assert bootstrap_interval(differences) == bootstrap_interval(differences)
    assert bootstrap_interval(differences, seed=1) != bootstrap_interval(differences, seed=2)


def test_constant_differences_give_a_point_interval() -> None:
    interval = bootstrap_interval([0.5] * 6, resamples=200)
    assert (interval.low, interval.high) == (0.5, 0.5)
    with pytest.raises(ValueError):
        bootstrap_interval([])


@pytest.mark.parametrize(
    ("pairs", "low", "high", "expected"),
    [
        (MIN_PAIRS - 1, 0.5, 1.0, "too few samples"),
        (MIN_PAIRS, 0.01, 1.0, "better"),
        (MIN_PAIRS, -1.0, -0.01, "worse"),
        (MIN_PAIRS, 0.0, 1.0, "no clear difference"),
        (MIN_PAIRS, -1.0, 0.0, "no clear difference"),
        (MIN_PAIRS, None, None, "too few samples"),
    ],
)
def test_verdict_rule(pairs: int, low: float | None, high: float | None, expected: str) -> None:
    assert verdict(pairs, low, high) == expected


def test_paired_comparison_uses_only_samples_scored_in_both() -> None:
    reference = {"s1": 3.0, "s2": 4.0, "s3": None, "s4": 2.0, "s5": 3.5, "s6": 4.0, "only-ref": 1.0}
    other = {"s1": 4.0, "s2": 4.5, "s3": 5.0, "s4": 3.0, "s5": 4.0, "s6": 4.25, "only-other": 5.0}
    result = paired_comparison(reference, other)
    differences = [1.0, 0.5, 1.0, 0.5, 0.25]
    assert result["pairs"] == 5
    assert result["meanDifference"] == _half_up(statistics.fmean(differences))
    low, high = _independent_interval(differences)
    assert result["interval"] == {"low": low, "high": high, "confidence": 0.95}
    assert result["verdict"] == "better"


def test_too_few_pairs_have_no_interval() -> None:
    result = paired_comparison({"a": 1.0, "b": 2.0}, {"a": 2.0, "b": 2.0})
    assert result == {"pairs": 2, "meanDifference": 0.5, "interval": None, "verdict": "too few samples"}
    assert paired_comparison({}, {})["meanDifference"] is None


def test_compare_variants_pairs_rows_by_file_and_sample() -> None:
    def row(variant: str, sample_id: str, composite: float | None) -> dict[str, object]:
        return {
            "file": "e.json",
            "sample_id": sample_id,
            "variant": variant,
            "scores": {"composite": composite},
        }

    rows = [row(v, f"s{i}", c) for i in range(6) for v, c in (("A", 4.0), ("B", 3.0 + 0.1 * i), ("C", 4.0))]
    comparisons = compare_variants(rows, ["A", "B", "C"])
    assert [(c["variant"], c["reference"]) for c in comparisons] == [("B", "A"), ("C", "A")]
    assert comparisons[0]["verdict"] == "worse" and comparisons[0]["pairs"] == 6
    assert comparisons[1]["meanDifference"] == 0.0
    assert comparisons[1]["verdict"] == "no clear difference"
    assert comparisons[0]["method"] == {"resamples": RESAMPLES, "seed": SEED, "minPairs": MIN_PAIRS}
    assert compare_variants(rows, ["A"]) == []
