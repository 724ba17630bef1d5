"""Grade an item's run and report every assertion and rubric dimension as a pytest subtest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from pytest_omk.collect import SampleFailed
from pytest_omk.grade.base import GradeContext
from pytest_omk.grade.registry import grade_sample
from pytest_omk.grade.scoring import Scores, judge_layer, score_sample
from pytest_omk.models.results import Reading
from pytest_omk.report.records import assertion_records, execution_record, rubric_records, scores_record

if TYPE_CHECKING:
    from pytest_omk.collect import SampleItem
    from pytest_omk.pipeline import SampleRun
    from pytest_omk.session import OmkSession

NO_JUDGE = "not scored: no judge configured (set --omk-judge, or OPENAI_API_KEY / ANTHROPIC_API_KEY)"


def emit_reading(reading: Reading, *, strict: bool, tripwire: bool = False) -> None:
    """Turn a reading into the subtest's outcome (inside ``subtests.test``)."""
    if reading.status == "fail":
        if tripwire:
            # A tripwire sample is expected to fail: its failed checks are expected failures too.
            pytest.xfail(f"tripwire: {reading.message}")
        raise SampleFailed(reading.message)
    if reading.status == "missing":
        if strict:
            raise SampleFailed(f"missing evidence (--omk-strict): {reading.message}")
        pytest.skip(reading.message)


@dataclass(frozen=True)
class GradedRun:
    """One run of a sample, graded: the readings of its checks and its scores."""

    readings: list[Reading]
    """Top-level assertion readings, by index."""
    rubric: dict[str, Reading]
    """Rubric dimension readings, by name (in the rubric's order)."""
    scores: Scores

    def statuses(self) -> list[str]:
        """Each check's status: assertions by index, then rubric dimensions."""
        return [str(r.status) for r in self.readings] + [str(r.status) for r in self.rubric.values()]

    def failed_checks(self, *, strict: bool) -> int:
        """Checks that count as failed (missing ones too under ``--omk-strict``)."""
        return sum(status == "fail" or (strict and status == "missing") for status in self.statuses())


def grade_run(item: SampleItem, run: SampleRun) -> GradedRun:
    """Grade one run of ``item``'s sample (deterministic checks plus the judge's readings)."""
    sample = item.loaded.sample
    assertions = list(sample.assertions or [])
    ctx = GradeContext(
        execution=run.execution,
        sample=sample,
        base_dir=item.bundle.base_dir,
        judge_readings=run.judge.assertions,
    )
    readings = grade_sample(assertions, ctx)
    rubric = {name: run.judge.rubric.get(name) or Reading.missing(NO_JUDGE) for name in sample.rubric or {}}
    weights = {name: dim.weight for name, dim in (sample.rubric or {}).items()}
    judge = judge_layer({n: r.score if r.status != "missing" else None for n, r in rubric.items()}, weights) if rubric else None
    return GradedRun(readings, rubric, score_sample(assertions, readings, judge))


def grade_and_report(item: SampleItem, subtests: pytest.Subtests, omk: OmkSession) -> None:
    """Grade ``item.omk_run``, emit one subtest per check, record scores; fail the item if needed."""
    if len(getattr(item, "omk_runs", ())) > 1:
        from pytest_omk.report.repeated import grade_and_report_repeats

        grade_and_report_repeats(item, subtests, omk)
        return
    run = item.omk_run
    sample = item.loaded.sample
    settings = omk.settings
    assertions = list(sample.assertions or [])
    graded = grade_run(item, run)
    readings, rubric, scores = graded.readings, graded.rubric, graded.scores

    # The record is complete before any subtest is reported: with -x the first failed subtest
    # ends the item, and the reports must still hold what was graded.
    record = item.omk_record
    record["scores"] = scores_record(scores)
    record["assertions"] = assertion_records(assertions, readings)
    record["rubric"] = rubric_records(sample, rubric)
    record["execution"] = execution_record(run.execution)
    record["urls"] = list(run.resolved.urls)
    record["modelCalls"] = model_calls(run)

    if sample.tripwire:
        suspend_xfail_mark(item)
    for index, (assertion, reading) in enumerate(zip(assertions, readings, strict=True)):
        with subtests.test(msg=f"assertion {index}: {assertion.type}"):
            emit_reading(reading, strict=settings.strict, tripwire=bool(sample.tripwire))
    for name, reading in rubric.items():
        with subtests.test(msg=f"rubric: {name}"):
            emit_reading(reading, strict=settings.strict, tripwire=bool(sample.tripwire))
    failed = graded.failed_checks(strict=settings.strict)

    total = len(assertions) + len(rubric)
    if failed:
        from pytest_omk.report.failure_text import failed_check_names, listed

        names = listed(failed_check_names(record, strict=settings.strict))
        raise SampleFailed(f"{failed} of {total} checks failed: {names} (composite {_fmt(scores.composite)})")
    if settings.min_composite is not None and (scores.composite is None or scores.composite < settings.min_composite):
        raise SampleFailed(
            f"composite {_fmt(scores.composite)} is below --omk-min-composite {settings.min_composite:g}"
        )


def model_calls(run: SampleRun) -> dict[str, int]:
    """Live and replayed model calls (executor and judge) of one run."""
    return {
        "live": int(not run.execution.replayed) + run.judge.calls - run.judge.replayed,
        "replayed": int(run.execution.replayed) + run.judge.replayed,
    }


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def suspend_xfail_mark(item: pytest.Item) -> None:
    """Keep a tripwire item's ``xfail`` mark off its subtests.

    Otherwise every *passing* check of a tripwire sample would be reported as an unexpected pass.
    pytest re-evaluates the mark when the call phase ends, so the item itself is still judged as
    ``xfail`` (failed checks: xfailed; none failed: xpassed).
    """
    from _pytest.skipping import xfailed_key  # private; confined to this function

    item.stash[xfailed_key] = None
