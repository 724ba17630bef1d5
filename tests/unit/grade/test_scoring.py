"""Scores: rounding, flat and layered assertion scores, judge layer, composite, judge repeats."""

from __future__ import annotations

import json
import math
import random
import subprocess
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_omk.grade.registry import grade_sample
from pytest_omk.grade.scoring import Scores, judge_layer, mean_score, ratio_to_score, score_sample
from pytest_omk.js.numbers import round2, round3
from pytest_omk.judge.judge import JUDGED_ASSERTIONS
from pytest_omk.models.results import Reading
from tests.support.grading import make_ctx, make_sample

VECTORS: dict[str, Any] = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "data" / "scoring" / "vectors.yaml").read_text(encoding="utf-8")
)
"""The suite's own scoring vectors (hand-computed from the scoring rules)."""
UPSTREAM_FIXTURE = "test/fixtures/eval-core/scoring-equivalence-v1.json"


@pytest.fixture(scope="module")
def equivalence(upstream_samples: Path) -> dict[str, Any]:
    """The format owner's scoring-equivalence vectors (skipped when the shared corpus is absent)."""
    data: dict[str, Any] = json.loads((upstream_samples / UPSTREAM_FIXTURE).read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(
    ("x", "rounded"),
    [
        (0.125, 0.13),  # exactly representable tie: up
        (2.675, 2.67),  # the double is just below the tie
        (1.005, 1.0),
        (8.345, 8.35),  # 8.3450000000000006395 is above the tie
        (1.045, 1.04),
        (3.2857142857142856, 3.29),
        (12.3 / 3, 4.1),
        (4.0, 4.0),
        (0.005, 0.01),  # 0.005000000000000000104 is above the tie
        (1 + 4 * (2 / 3), 3.67),
    ],
)
def test_round2_is_to_fixed_2_half_up_on_the_exact_double(x: float, rounded: float) -> None:
    assert round2(x) == rounded


@pytest.mark.usefixtures("node")
def test_round2_agrees_with_javascript_to_fixed() -> None:
    rng = random.Random(7)
    values = [rng.uniform(1, 5) for _ in range(1500)] + [k / 1000 for k in range(1000, 5001, 5)]
    script = "const v = JSON.parse(require('fs').readFileSync(0, 'utf8')); console.log(JSON.stringify(v.map(x => Number(x.toFixed(2)))));"
    done = subprocess.run(
        ["node", "-e", script], input=json.dumps(values), capture_output=True, text=True, check=True
    )
    assert [round2(v) for v in values] == json.loads(done.stdout)


def test_round2_and_round3_equal_the_exact_decimal_rounding() -> None:
    """Whole quanta (5, 4.5, 3.25) skip the decimal arithmetic; the value must not change."""
    rng = random.Random(11)
    values = [k / d for k in range(-600, 601) for d in (1, 2, 4, 8, 10, 100, 1000, 3, 7)]
    values += [rng.uniform(-1e6, 1e6) for _ in range(2000)] + [2.0**52 - 0.5, 2.0**52, 2.0**60, 1e-300]
    for value in values:
        for rounded, places in ((round2(value), "0.01"), (round3(value), "0.001")):
            exact = float(Decimal(value).quantize(Decimal(places), rounding=ROUND_HALF_UP))
            assert (rounded, math.copysign(1, rounded)) == (exact, math.copysign(1, exact)), value
    assert math.copysign(1, round2(-0.0)) == -1.0


def test_ratio_to_score() -> None:
    assert ratio_to_score(2, 3) == 3.67  # the format page's example
    assert ratio_to_score(0, 4) == 1.0
    assert ratio_to_score(4, 4) == 5.0
    assert ratio_to_score(0, 0) is None


def check_deterministic(
    assertions: list[Any],
    output: str,
    tool_calls: list[Any],
    passed: list[bool],
    judge: float,
    expected: Scores,
) -> None:
    sample = make_sample(*assertions)
    parsed = sample.assertions or []
    readings = grade_sample(parsed, make_ctx(sample, output, toolCalls=tool_calls))
    assert [r.status == "pass" for r in readings] == passed
    assert score_sample(parsed, readings, judge=judge) == expected


def check_judged(
    assertions: list[Any],
    output: str,
    context: str,
    judge_scores: list[int],
    passed: list[bool],
    expected: Scores,
) -> None:
    sample = make_sample(*assertions, context=context)
    parsed = sample.assertions or []
    judged = {}
    for i, (a, score) in enumerate(zip(parsed, judge_scores, strict=True)):
        assert isinstance(a, JUDGED_ASSERTIONS)
        judged[i] = (Reading.passed if score >= a.threshold else Reading.failed)(
            f"score {score}", score=score
        )
    readings = grade_sample(parsed, make_ctx(sample, output, judge_readings=judged))
    assert [r.status == "pass" for r in readings] == passed
    assert score_sample(parsed, readings, judge=None) == expected


def check_repeats(scores: list[int], mean: float) -> None:
    # A score of 0 marks a failed judge call: missing evidence, not a zero.
    readings = [
        Reading.passed(score=s) if s else Reading.missing("judge failed", "judge-reply") for s in scores
    ]
    assert mean_score(readings) == mean
    assert mean_score([Reading.missing("x", "judge-reply")]) is None


def check_ensemble(members: list[list[int]], member_means: list[float], mean: float) -> None:
    got = [mean_score([Reading.passed(score=s) for s in m]) for m in members]
    assert got == member_means
    assert mean_score([Reading.passed(score=m) for m in got]) == mean


def test_worked_vector() -> None:
    v = VECTORS["worked"]
    check_deterministic(
        v["assertions"], v["output"], v["toolCalls"], v["passed"], v["judge"], Scores(**v["scores"])
    )


def test_worked_vector_without_a_trace() -> None:
    v = VECTORS["worked"]
    sample = make_sample(*v["assertions"])
    readings = grade_sample(sample.assertions or [], make_ctx(sample, v["output"]))
    assert [i for i, r in enumerate(readings) if r.status == "missing"] == v["without_trace"]["missing"]
    scores = score_sample(sample.assertions or [], readings, judge=v["judge"])
    assert scores == Scores(**v["without_trace"]["scores"], judge=v["judge"])


def test_judge_scored_assertions_vector() -> None:
    v = VECTORS["judged"]
    check_judged(
        v["assertions"],
        v["output"],
        v["context"],
        v["judge_scores"],
        v["passed"],
        Scores(**v["scores"], judge=None),
    )


def test_judge_repeats_average_observed_readings_only() -> None:
    check_repeats(VECTORS["judge_repeat"]["scores"], VECTORS["judge_repeat"]["mean"])


def test_judge_ensemble_is_the_mean_of_member_means() -> None:
    v = VECTORS["judge_ensemble"]
    check_ensemble(v["members"], v["member_means"], v["mean"])


def test_upstream_vectors(equivalence: dict[str, Any]) -> None:
    """The same checks on the format owner's own vectors."""
    v = equivalence["deterministicAssertions"]
    layered = v["expectedLayered"]["layeredScores"]
    expected = Scores(
        assertions=v["expected"]["score"],
        fact=layered["factScore"],
        behavior=layered["behaviorScore"],
        judge=layered["judgeScore"],
        composite=v["expectedLayered"]["compositeScore"],
    )
    passed = [d["passed"] for d in v["expected"]["details"]]
    check_deterministic(
        v["assertions"], v["output"], v["context"]["toolCalls"], passed, layered["judgeScore"], expected
    )
    f = equivalence["fixedResponseAssertions"]
    score = f["expected"]["score"]
    check_judged(
        f["assertions"],
        f["output"],
        f["sample"]["context"],
        f["replayScores"],
        [d["passed"] for d in f["expected"]["details"]],
        Scores(assertions=score, fact=score, behavior=None, judge=None, composite=score),
    )
    check_repeats(equivalence["judgeRepeat"]["replayScores"], equivalence["judgeRepeat"]["expected"]["score"])
    e = equivalence["judgeEnsemble"]
    check_ensemble(
        [m["replayScores"] for m in e["members"]],
        [m["score"] for m in e["expected"]["ensemble"]],
        e["expected"]["score"],
    )


def test_judge_layer_is_the_weighted_mean_only_when_every_dimension_is_scored() -> None:
    assert judge_layer({"security": 4, "actionability": 3}, {"security": 0.6, "actionability": 0.4}) == 3.6
    third = 0.3333333333333333
    assert judge_layer({"a": 4, "b": 4, "c": 5}, {"a": third, "b": third, "c": third}) == 4.33
    assert (
        judge_layer({"security": 4, "actionability": None}, {"security": 0.6, "actionability": 0.4}) is None
    )
    assert judge_layer({"security": 4}, {"security": 0.6, "actionability": 0.4}) is None
    assert judge_layer({}, {}) is None


def _scores(assertions: list[dict[str, Any]], statuses: list[str], judge: float | None = None) -> Scores:
    sample = make_sample(*assertions)
    readings = [Reading(status=s, message=s) for s in statuses]  # type: ignore[arg-type]
    return score_sample(sample.assertions or [], readings, judge)


CONTAINS = {"type": "contains", "value": "a"}
MAX_LEN = {"type": "max_length", "value": 10}


def test_missing_readings_leave_the_weights() -> None:
    scores = _scores([CONTAINS, {"type": "cost_max", "value": 1, "weight": 5}], ["pass", "missing"])
    assert scores == Scores(assertions=5.0, fact=5.0, behavior=None, judge=None, composite=5.0)


def test_assert_set_layer_attribution() -> None:
    fact_set = {"type": "assert-set", "children": [CONTAINS, {"type": "regex", "pattern": "b"}]}
    behavior_set = {
        "type": "assert-set",
        "mode": "any",
        "children": [MAX_LEN, {"type": "assert-set", "children": [MAX_LEN]}],
    }
    mixed_set = {"type": "assert-set", "children": [CONTAINS, MAX_LEN], "weight": 3}
    scores = _scores([fact_set, behavior_set, mixed_set], ["pass", "fail", "fail"])
    assert (scores.fact, scores.behavior) == (5.0, 1.0)
    assert scores.assertions == round2(1 + 4 * 1 / 5)  # the mixed set counts in the flat score only
    assert scores.composite == 3.0


def test_only_mixed_sets_give_a_flat_score_but_no_composite() -> None:
    mixed_set = {"type": "assert-set", "children": [CONTAINS, MAX_LEN]}
    assert _scores([mixed_set], ["pass"]) == Scores(5.0, None, None, None, None)


def test_nothing_observed_means_no_scores_at_all() -> None:
    assert _scores([CONTAINS, MAX_LEN], ["missing", "missing"]) == Scores(None, None, None, None, None)
    assert _scores([], []) == Scores(None, None, None, None, None)


def test_judge_alone_is_the_composite() -> None:
    assert _scores([], [], judge=3.5) == Scores(None, None, None, 3.5, 3.5)


def test_composite_rounds_the_mean_of_rounded_layers() -> None:
    # fact 1 + 4·2/3 = 3.67 (rounded first), behavior 1.0, judge 4 → (3.67 + 1 + 4) / 3 = 2.89
    scores = _scores(
        [CONTAINS, CONTAINS, {**CONTAINS, "value": "b"}, MAX_LEN], ["pass", "pass", "fail", "fail"], 4
    )
    assert (scores.fact, scores.behavior, scores.composite) == (3.67, 1.0, 2.89)


def test_score_sample_needs_one_reading_per_assertion() -> None:
    with pytest.raises(ValueError, match="1 assertions but 0 readings"):
        _scores([CONTAINS], [])
