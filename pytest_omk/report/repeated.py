"""Grade and report a sample that ran ``--omk-repeat N`` times (N > 1).

Each run is graded on its own; each check's subtest then reports its pass rate across the runs
(``passed 4/5 runs``) and fails only below ``--omk-min-pass-rate``; the item fails when the share
of runs in which every check passed is below it. The record's ``scores`` are the per-layer means
of the runs, and ``repeats`` carries the pass rate, pass^N and mean ± SD per layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk.collect import SampleFailed
from pytest_omk.compare.repeats import check_verdict, mean_scores, pass_rate_message, repeats_record
from pytest_omk.compare.stats import mean2, present, sd3
from pytest_omk.models.results import Reading
from pytest_omk.report.records import assertion_records, execution_record, rubric_records, scores_record
from pytest_omk.report.subtests import GradedRun, emit_reading, grade_run, model_calls, suspend_xfail_mark

if TYPE_CHECKING:
    from pytest_omk.collect import SampleItem
    from pytest_omk.compare.repeats import CheckVerdict
    from pytest_omk.session import OmkSession


def _aggregate(readings: list[Reading], *, strict: bool, min_pass_rate: float) -> tuple[Reading, CheckVerdict]:
    """One check's runs → a single reading (status and message across runs, mean judge score)."""
    verdict = check_verdict(
        [r.status for r in readings], [r.message for r in readings], strict=strict, min_pass_rate=min_pass_rate
    )
    score = mean2(r.score for r in readings if r.status != "missing")
    return Reading(status=verdict.status, message=verdict.message, score=score), verdict


def _run_passed(graded: GradedRun, *, strict: bool, min_composite: float | None) -> bool:
    """A run passed when no check failed and its composite met ``--omk-min-composite`` (if set)."""
    if graded.failed_checks(strict=strict):
        return False
    composite = graded.scores.composite
    return min_composite is None or (composite is not None and composite >= min_composite)


def grade_and_report_repeats(item: SampleItem, subtests: pytest.Subtests, omk: OmkSession) -> None:
    """Grade every run of ``item``, emit one aggregated subtest per check, record, fail if needed."""
    settings = omk.settings
    runs = item.omk_runs
    sample = item.loaded.sample
    assertions = list(sample.assertions or [])
    graded = [grade_run(item, run, omk.js) for run in runs]
    tripwire = bool(sample.tripwire)
    if tripwire:
        suspend_xfail_mark(item)

    def aggregate(readings: list[Reading]) -> tuple[Reading, CheckVerdict]:
        return _aggregate(readings, strict=settings.strict, min_pass_rate=settings.min_pass_rate)

    failed_checks = 0
    checks: list[tuple[str, Reading]] = []
    assertion_readings: list[Reading] = []
    tallies: list[dict[str, int]] = []
    for index, assertion in enumerate(assertions):
        reading, verdict = aggregate([g.readings[index] for g in graded])
        assertion_readings.append(reading)
        tallies.append(verdict.tally.as_record())
        failed_checks += reading.status == "fail"
        checks.append((f"assertion {index}: {assertion.type}", reading))
    rubric: dict[str, Reading] = {}
    rubric_detail: dict[str, dict[str, Any]] = {}
    for name in sample.rubric or {}:
        per_run = [g.rubric[name] for g in graded]
        reading, verdict = aggregate(per_run)
        rubric[name] = reading
        scores = [r.score if r.status != "missing" else None for r in per_run]
        rubric_detail[name] = {"readings": scores, "sd": sd3(scores), "runs": verdict.tally.as_record()}
        failed_checks += reading.status == "fail"
        checks.append((f"rubric: {name}", reading))

    run_scores = [scores_record(g.scores) for g in graded]
    run_passed = [_run_passed(g, strict=settings.strict, min_composite=settings.min_composite) for g in graded]
    costs = [run.execution.costUSD for run in runs]
    details = [
        {"repeat": i, "passed": ok, "scores": scores, "replayed": run.execution.replayed, "costUSD": cost}
        for i, (ok, scores, run, cost) in enumerate(zip(run_passed, run_scores, runs, costs, strict=True))
    ]
    repeats = repeats_record(run_passed, run_scores, run_details=details)
    known_costs = present(costs)
    repeats["costUSD"] = round(sum(known_costs), 6) if known_costs else None

    record = item.omk_record
    record["scores"] = mean_scores(run_scores)
    record["assertions"] = [
        {**entry, "runs": tally}
        for entry, tally in zip(assertion_records(assertions, assertion_readings), tallies, strict=True)
    ]
    record["rubric"] = {
        name: {**entry, **rubric_detail[name]} for name, entry in rubric_records(sample, rubric).items()
    }
    record["execution"] = execution_record(runs[0].execution)
    record["urls"] = list(runs[0].resolved.urls)
    calls = [model_calls(run) for run in runs]
    record["modelCalls"] = {kind: sum(c[kind] for c in calls) for kind in ("live", "replayed")}
    record["repeats"] = repeats

    # Subtests only after the record is complete: under -x the first failed one ends the item.
    for message, reading in checks:
        with subtests.test(msg=message):
            emit_reading(reading, strict=settings.strict, tripwire=tripwire)

    problems: list[str] = []
    if repeats["passRate"] < settings.min_pass_rate:
        problems.append(pass_rate_message(repeats, settings.min_pass_rate))
    elif failed_checks:  # only possible when a run failed on --omk-min-composite alone
        total = len(assertions) + len(rubric)
        problems.append(f"{failed_checks} of {total} checks passed in too few runs")
    if problems:
        raise SampleFailed("; ".join(problems))
