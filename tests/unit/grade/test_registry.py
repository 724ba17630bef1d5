"""assert-set composition, `not` on valid/missing/error readings, judge-scored pass-through, dispatch."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.grade.base import GradeContext, finish
from pytest_omk.grade.registry import grade, grade_sample
from pytest_omk.models.results import Reading
from tests.support.grading import make_ctx, make_sample, read, read_all


def aset(mode: str, *children: dict[str, Any], negate: bool = False) -> dict[str, Any]:
    built: dict[str, Any] = {"type": "assert-set", "mode": mode, "children": list(children)}
    return {**built, "not": True} if negate else built


HAS = {"type": "contains", "value": "hello"}
LACKS = {"type": "contains", "value": "absent"}


@pytest.mark.parametrize(
    ("assertion", "expected"),
    [
        (aset("all", HAS, {"type": "max_length", "value": 40}), "pass"),
        (aset("all", HAS, LACKS), "fail"),
        (aset("any", LACKS, HAS), "pass"),
        (aset("any", LACKS, LACKS), "fail"),
        (aset("all", HAS, {**LACKS, "not": True}), "pass"),  # each child's own not applies
        (aset("any", aset("all", HAS, LACKS), aset("all", HAS)), "pass"),  # nesting
        (aset("all", HAS, aset("any", LACKS, {"type": "regex", "pattern": "^x"})), "fail"),
        (aset("all", HAS), "pass"),
        (aset("all", HAS, negate=True), "fail"),  # not on the set applies after combining
        ({"type": "assert-set", "children": [HAS, LACKS]}, "fail"),  # mode defaults to all
    ],
)
def test_assert_set_combines_children(assertion: dict[str, Any], expected: str) -> None:
    assert read(assertion, "Hello world").status == expected


def test_children_weights_are_ignored() -> None:
    light = aset("any", {**HAS, "weight": 0.1}, {**LACKS, "weight": 100})
    assert read(light, "hello").status == "pass"


def test_a_child_without_evidence_makes_the_whole_set_missing() -> None:
    for mode in ("all", "any"):
        assertion = aset(mode, HAS, {"type": "tools_called", "values": ["Bash"]}, negate=True)
        reading = read(assertion, "hello")  # no trace reported
        assert reading.status == "missing"
        assert "tools_called" in reading.message


def test_assert_set_failure_names_the_failing_child() -> None:
    reading = read(aset("all", HAS, LACKS), "hello there")
    assert reading.status == "fail"
    assert "1 of 2 children passed" in reading.message
    assert "[1] contains: expected the output to contain 'absent'" in reading.message
    assert "\n" not in reading.message


def test_not_inverts_valid_readings_only() -> None:
    sample = make_sample({"type": "contains", "value": "x", "not": True})
    assertion = (sample.assertions or [])[0]
    ctx = make_ctx(sample, "x")
    assert grade(assertion, ctx).status == "fail"
    assert grade(assertion, make_ctx(sample, "y")).status == "pass"
    missing = Reading.missing("no judge configured", "no-judge")
    error = Reading.error("custom check crashed")
    assert finish(assertion, missing) == missing
    assert finish(assertion, error) == error


JUDGED = [
    {"type": "semantic_similarity", "reference": "Hello"},
    {"type": "faithfulness"},
    {"type": "answer_relevancy"},
    {"type": "context_recall", "reference": "facts"},
]


def test_judge_scored_assertions_hand_on_the_judges_reading() -> None:
    readings = {
        0: Reading.passed("score 4", score=4),
        1: Reading.failed("score 2 < 3", score=2),
        3: Reading.missing("the judge reply was not JSON", "judge-reply"),
    }
    out = read_all(JUDGED, "Hello", sample_fields={"context": "ctx"}, judge_readings=readings)
    assert [r.status for r in out] == ["pass", "fail", "missing", "missing"]
    assert out[0].score == 4
    assert "no judge configured" in out[2].message


def test_not_inverts_a_valid_judge_reading_but_not_a_missing_one() -> None:
    negated = [{**a, "not": True} for a in JUDGED]
    readings = {0: Reading.passed("score 5", score=5), 1: Reading.failed("score 1", score=1)}
    out = read_all(negated, "Hello", sample_fields={"context": "ctx"}, judge_readings=readings)
    assert [r.status for r in out] == ["fail", "pass", "missing", "missing"]
    assert out[0].score == 5


def test_grade_sample_tells_each_grader_its_top_level_index() -> None:
    sample = make_sample(HAS, {"type": "answer_relevancy"}, LACKS, {"type": "answer_relevancy"})
    ctx: GradeContext = make_ctx(sample, "hello", judge_readings={3: Reading.passed("score 5", score=5)})
    out = grade_sample(sample.assertions or [], ctx)
    assert [r.status for r in out] == ["pass", "missing", "fail", "pass"]


def test_a_context_at_another_index_is_the_same_context_with_that_index() -> None:
    from dataclasses import replace

    ctx: GradeContext = make_ctx(make_sample(HAS), "hello", judge_readings={1: Reading.passed("ok", score=4)})
    moved = ctx.at(2)
    assert moved == replace(ctx, index=2) and moved.index == 2 and ctx.index == 0
    assert ctx.at(0) is ctx and moved.output == "hello" and moved.judge_readings is ctx.judge_readings
