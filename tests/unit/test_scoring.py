"""Scores: rounding, flat and layered assertion scores, judge layer, composite, judge repeats."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.grade import (
    Scores,
    grade_sample,
    judge_layer,
    mean_score,
    ratio_to_score,
    round2,
    score_sample,
)
from pytest_omk.models.results import Reading
from tests.unit._grading import make_ctx, make_sample

FIXTURE = "test/fixtures/eval-core/scoring-equivalence-v1.json"


@pytest.fixture(scope="module")
def equivalence(upstream_samples: Path) -> dict[str, Any]:
    """Upstream's scoring-equivalence vectors."""
    data: dict[str, Any] = json.loads((upstream_samples / FIXTURE).read_text(encoding="utf-8"))
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


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_round2_agrees_with_javascript_to_fixed() -> None:
    rng = random.Random(7)
    values = [rng.uniform(1, 5) for _ in range(1500)] + [k / 1000 for k in range(1000, 5001, 5)]
    script = "const v = JSON.parse(require('fs').readFileSync(0, 'utf8')); console.log(JSON.stringify(v.map(x => Number(x.toFixed(2)))));"
    done = subprocess.run(
        ["node", "-e", script], input=json.dumps(values), capture_output=True, text=True, check=True
    )
    assert [round2(v) for v in values] == json.loads(done.stdout)


def test_ratio_to_score() -> None:
    assert ratio_to_score(2, 3) == 3.67  # the format page's example
    assert ratio_to_score(0, 4) == 1.0
    assert ratio_to_score(4, 4) == 5.0
    assert ratio_to_score(0, 0) is None


def test_worked_vector_of_the_semantics_document(equivalence: dict[str, Any]) -> None:
    vector = equivalence["deterministicAssertions"]
    sample = make_sample(*vector["assertions"])
    assertions = sample.assertions or []
    ctx = make_ctx(sample, vector["output"], toolCalls=vector["context"]["toolCalls"])
    readings = grade_sample(assertions, ctx)

    expected = vector["expected"]
    assert [r.status == "pass" for r in readings] == [d["passed"] for d in expected["details"]]
    assert sum(r.status == "pass" for r in readings) == expected["passed"]

    layered = vector["expectedLayered"]
    scores = score_sample(assertions, readings, judge=layered["layeredScores"]["judgeScore"])
    assert scores == Scores(
        assertions=expected["score"],
        fact=layered["layeredScores"]["factScore"],
        behavior=layered["layeredScores"]["behaviorScore"],
        judge=layered["layeredScores"]["judgeScore"],
        composite=layered["compositeScore"],
    )
    assert (scores.assertions, scores.fact, scores.behavior, scores.composite) == (4.0, 3.29, 5.0, 4.1)


def test_fixed_response_judge_assertions_vector(equivalence: dict[str, Any]) -> None:
    vector = equivalence["fixedResponseAssertions"]
    sample = make_sample(*vector["assertions"], context=vector["sample"]["context"])
    assertions = sample.assertions or []
    judged = {
        i: (Reading.passed if score >= a.threshold else Reading.failed)(f"score {score}", score=score)  # type: ignore[attr-defined]
        for i, (a, score) in enumerate(zip(assertions, vector["replayScores"], strict=True))
    }
    readings = grade_sample(assertions, make_ctx(sample, vector["output"], judge_readings=judged))
    assert [r.status == "pass" for r in readings] == [d["passed"] for d in vector["expected"]["details"]]
    scores = score_sample(assertions, readings, judge=None)
    assert scores.assertions == vector["expected"]["score"]
    assert scores.fact == vector["expected"]["score"]  # judge-scored types are fact-layer
    assert (scores.behavior, scores.composite) == (None, 3.0)


def test_judge_repeats_average_observed_readings_only(equivalence: dict[str, Any]) -> None:
    vector = equivalence["judgeRepeat"]
    # A score of 0 marks a failed judge call: missing evidence, not a zero.
    readings = [
        Reading.passed(score=s) if s else Reading.missing("judge failed") for s in vector["replayScores"]
    ]
    assert mean_score(readings) == vector["expected"]["score"]
    assert mean_score([Reading.missing("x")]) is None


def test_judge_ensemble_is_the_mean_of_member_means(equivalence: dict[str, Any]) -> None:
    vector = equivalence["judgeEnsemble"]
    members = [mean_score([Reading.passed(score=s) for s in m["replayScores"]]) for m in vector["members"]]
    assert members == [member["score"] for member in vector["expected"]["ensemble"]]
    assert mean_score([Reading.passed(score=m) for m in members]) == vector["expected"]["score"]


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


def test_worked_vector_without_a_trace(equivalence: dict[str, Any]) -> None:
    # The docs' follow-up: with no trace, the mixed set's tools_called child is missing evidence.
    vector = equivalence["deterministicAssertions"]
    sample = make_sample(*vector["assertions"])
    readings = grade_sample(sample.assertions or [], make_ctx(sample, vector["output"]))
    assert readings[4].status == "missing"
    scores = score_sample(sample.assertions or [], readings, judge=4)
    assert (scores.assertions, scores.fact, scores.behavior, scores.composite) == (3.5, 3.29, 5.0, 4.1)
