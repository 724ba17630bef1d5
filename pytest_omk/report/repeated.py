"""The record of a sample that ran ``--omk-repeat N`` times (N > 1).

Grading is :mod:`pytest_omk.grade.verdict`'s: each check's reading there already aggregates the
runs. The record's ``scores`` are the per-layer means of the runs, each check carries its tally
across the runs, and ``repeats`` the pass rate, pass^N and mean ± SD per layer.
"""

from __future__ import annotations

from typing import Any

from pytest_omk.grade.verdict import Repeats, Verdict
from pytest_omk.models import Sample
from pytest_omk.models.report import LayerScores, ModelCalls, RubricEntry, RunTally
from pytest_omk.models.report import Repeats as RepeatsRecord
from pytest_omk.models.run import SampleRun
from pytest_omk.report.records import assertion_records, execution_record, model_calls, rubric_records


def repeated_parts(sample: Sample, runs: list[SampleRun], graded: Verdict, repeats: Repeats) -> dict[str, Any]:
    """The graded parts of a repeated sample's record (the first run's execution stands for all)."""
    entries = assertion_records(list(sample.assertions or []), graded.readings)
    for entry, tally in zip(entries, repeats.tallies, strict=True):
        entry.runs = RunTally.model_validate(tally)
    calls = [model_calls(run) for run in runs]
    return {
        "scores": LayerScores.model_validate(repeats.scores),
        "assertions": entries,
        "rubric": {
            name: RubricEntry.model_validate({**entry.model_dump(), **repeats.rubric_detail[name]})
            for name, entry in rubric_records(sample, graded.rubric).items()
        },
        "execution": execution_record(runs[0].execution),
        "urls": list(runs[0].resolved.urls),
        # Whole numbers: the builtin sum is exact here (the JavaScript sum is for scores and costs).
        "modelCalls": ModelCalls(live=sum(c.live for c in calls), replayed=sum(c.replayed for c in calls)),
        "repeats": RepeatsRecord.model_validate(repeats.record),
    }
