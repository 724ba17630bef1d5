"""The verdict stage without pytest: one run is the N = 1 case of repeats."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_omk.grade.verdict import NO_JUDGE, verdict
from pytest_omk.models import Sample
from pytest_omk.models.results import ExecutionResult, Reading
from pytest_omk.models.run import ExecutionRequest, JudgeOutcome, ResolvedText, SampleRun
from tests.support.grading import ENGINE


@dataclass(frozen=True)
class Rules:
    strict: bool = False
    min_composite: float | None = None
    min_pass_rate: float = 1.0


SAMPLE = Sample.model_validate(
    {
        "sample_id": "s",
        "prompt": "p",
        "assertions": [{"type": "contains", "value": "Paris"}, {"type": "max_length", "value": 20}],
        "rubric": {"accuracy": {"criterion": "right", "weight": 1.0}},
    }
)


def run(output: str, score: int | None = 5) -> SampleRun:
    rubric = (
        {}
        if score is None
        else {"accuracy": Reading(status="pass" if score >= 3 else "fail", message="r", score=score)}
    )
    return SampleRun(
        ExecutionResult(output=output),
        JudgeOutcome(rubric=rubric),
        ResolvedText("p", None),
        ExecutionRequest("p"),
    )


def test_one_passing_run() -> None:
    result = verdict(SAMPLE, Path("."), [run("Paris")], Rules(), ENGINE)
    assert [r.status for r in result.readings] == ["pass", "pass"]
    assert result.rubric["accuracy"].score == 5
    assert result.failure is None and result.repeats is None
    assert result.runs[0].scores.composite is not None


def test_one_failing_run_names_the_count_and_composite() -> None:
    result = verdict(SAMPLE, Path("."), [run("Lyon, a very long answer indeed")], Rules(), ENGINE)
    assert result.failure is not None and result.failure.startswith("2 of 3 checks failed (composite ")


def test_no_judge_is_missing_evidence_and_min_composite_fails() -> None:
    result = verdict(SAMPLE, Path("."), [run("Paris", score=None)], Rules(min_composite=5.5), ENGINE)
    assert result.rubric["accuracy"] == Reading.missing(NO_JUDGE, "no-judge")
    assert result.failure is not None and "below --omk-min-composite 5.5" in result.failure


def test_repeats_aggregate_each_check_and_the_pass_rate() -> None:
    result = verdict(SAMPLE, Path("."), [run("Paris"), run("Lyon")], Rules(min_pass_rate=0.5), ENGINE)
    assert result.repeats is not None
    assert result.repeats.record["n"] == 2 and result.repeats.record["passRate"] == 0.5
    assert result.readings[0].message == "passed 1/2 runs"
    assert result.repeats.tallies[0] == {"pass": 1, "fail": 1, "missing": 0}
    assert result.failure is None
    stricter = verdict(SAMPLE, Path("."), [run("Paris"), run("Lyon")], Rules(), ENGINE)
    assert stricter.failure is not None and stricter.failure.startswith("pass rate 0.50 (1/2 runs)")
