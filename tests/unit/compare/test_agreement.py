"""The agreement figures against their textbook definitions (computed here by the double sums) and
known values; the reference's own code is compared in tests/parity/test_gold_parity.py."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

import pytest

from pytest_omk.compare.agreement import Pair, interval_alpha, midranks, ordinal_alpha, weighted_kappa, wilson
from pytest_omk.compare.calibration import Gates, JudgeReading, alpha_interval, calibrate, contamination
from pytest_omk.models.gold import GoldAnnotation, GoldDataset, GoldMetadata


def ordinal_by_definition(pairs: list[Pair]) -> float:
    """Krippendorff's ordinal α from the coincidence matrix and the ordinal metric, as published."""
    pooled = [v for p in pairs for v in (p.gold, p.judge)]
    counts = {v: pooled.count(v) for v in sorted(set(pooled))}
    values = list(counts)

    def delta2(c: float, k: float) -> float:
        lo, hi = sorted((values.index(c), values.index(k)))
        return (sum(counts[values[g]] for g in range(lo, hi + 1)) - (counts[c] + counts[k]) / 2) ** 2

    n = len(pooled)
    observed = sum(2 * delta2(p.gold, p.judge) for p in pairs)
    expected = sum(counts[c] * counts[k] * delta2(c, k) for c in values for k in values)
    return 1 - (n - 1) * observed / expected


def test_ordinal_alpha_is_the_published_definition() -> None:
    rng = random.Random(7)
    for _ in range(50):
        pairs = [Pair(rng.randint(1, 5), rng.choice((1, 2, 2.5, 4, 5))) for _ in range(rng.randint(3, 30))]
        if len({v for p in pairs for v in (p.gold, p.judge)}) < 2:
            continue
        assert ordinal_alpha(pairs) == pytest.approx(ordinal_by_definition(pairs), abs=1e-9)


def test_midranks_share_ties() -> None:
    assert midranks([1, 1, 2, 5, 5, 5]) == {1: 1.0, 2: 2.5, 5: 4.5}


def test_perfect_and_undefined_agreement() -> None:
    assert interval_alpha([Pair(1, 1), Pair(5, 5), Pair(3, 3)]) == 1.0
    assert interval_alpha([Pair(3, 3)] * 4) is None
    assert weighted_kappa([Pair(3, 3)] * 4, 1, 5) is None
    assert interval_alpha([]) is None


def test_wilson_interval_known_values() -> None:
    low, high = wilson(0, 5) or (math.nan, math.nan)
    assert low == 0.0 and high == pytest.approx(0.4345, abs=1e-4)
    low, high = wilson(9, 10) or (math.nan, math.nan)
    assert low == pytest.approx(0.5958, abs=1e-4) and high == pytest.approx(0.9821, abs=1e-4)
    assert wilson(0, 0) is None


def test_the_bootstrap_interval_is_seeded_and_holds_the_estimate() -> None:
    rng = random.Random(3)
    pairs = [
        Pair(g, min(5, max(1, g + rng.choice((-1, 0, 0, 1))))) for g in (rng.randint(1, 5) for _ in range(40))
    ]
    first, second = alpha_interval(pairs), alpha_interval(pairs)
    assert first == second and first is not None
    assert first[0] <= (interval_alpha(pairs) or 0) <= first[1]


def _dataset(scores: Mapping[str, float]) -> GoldDataset:
    return GoldDataset(
        directory="gold",
        metadata=GoldMetadata(annotator="claude-opus", annotatedAt="2026-12-01", version="1"),
        annotations=tuple(GoldAnnotation(sample_id=k, score=v) for k, v in scores.items()),
    )


def test_calibrate_lists_the_left_out_and_gates_the_lower_bounds() -> None:
    gold = {"a": 5, "b": 1, "c": 2, "d": 4, "gone": 3, "unjudged": 3}
    readings = {k: JudgeReading(v, f"r-{k}") for k, v in {"a": 5, "b": 4, "c": 4, "d": 4}.items()}
    readings["unjudged"] = JudgeReading(None)
    found = calibrate(_dataset(gold), readings, threshold=3, gates=Gates(min_agreement=0.5, min_tnr=0.5, min_tpr=0.1),
                      judge_ids=["Claude-Opus-4"])  # fmt: skip
    assert found.pairs == 4 and found.missing == ["gone"] and found.unjudged == ["unjudged"]
    assert found.tnr is not None and (found.tnr.hits, found.tnr.total) == (0, 2)
    assert [d.sample_id for d in found.worst] == ["b", "c"]
    assert found.worst[0].reason == "r-b"
    assert [f.split()[0] for f in found.failures] == ["alpha's", "TNR"]
    assert found.contamination is not None and "claude-opus-4" in found.contamination


def test_contamination_matches_either_way_round_and_ignores_others() -> None:
    assert contamination("gpt-4o", ["openai:gpt-4o-mini"]) is not None
    assert contamination("team-labels", ["gpt-4o-mini", "openai:gpt-4o-mini"]) is None
