"""The record of a sample that ran ``--omk-repeat N`` times (N > 1).

Grading is :mod:`pytest_omk.grade.verdict`'s: each check's reading there already aggregates the
runs. The record's ``scores`` are the per-layer means of the runs, each check carries its tally
across the runs, and ``repeats`` the pass rate, pass^N and mean ± SD per layer.
"""

from __future__ import annotations

from typing import Any

from pytest_omk.grade.verdict import Repeats, Verdict
from pytest_omk.models import Sample
from pytest_omk.models.run import SampleRun
from pytest_omk.report.records import assertion_records, execution_record, model_calls, rubric_records


def fill_repeated_record(
    record: dict[str, Any], sample: Sample, runs: list[SampleRun], graded: Verdict, repeats: Repeats
) -> None:
    """Complete the record of a repeated sample (the first run's execution stands for all)."""
    record["scores"] = repeats.scores
    entries = assertion_records(list(sample.assertions or []), graded.readings)
    record["assertions"] = [{**entry, "runs": tally} for entry, tally in zip(entries, repeats.tallies, strict=True)]
    record["rubric"] = {
        name: {**entry, **repeats.rubric_detail[name]} for name, entry in rubric_records(sample, graded.rubric).items()
    }
    record["execution"] = execution_record(runs[0].execution)
    record["urls"] = list(runs[0].resolved.urls)
    calls = [model_calls(run) for run in runs]
    record["modelCalls"] = {kind: sum(c[kind] for c in calls) for kind in ("live", "replayed")}
    record["repeats"] = repeats.record
