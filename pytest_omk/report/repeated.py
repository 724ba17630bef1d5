"""The record of a sample that ran ``--omk-repeat N`` times (N > 1).

Grading is :mod:`pytest_omk.grade.verdict`'s: each check's reading there already aggregates the
runs. The record's ``scores`` are the per-layer means of the runs, each check carries its tally
across the runs, and ``repeats`` the pass rate, pass^N and mean ± SD per layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_omk.grade.verdict import Repeats, Verdict
from pytest_omk.models import Sample
from pytest_omk.models.report import AssertionEntry, LayerScores, RubricEntry
from pytest_omk.models.report import Repeats as RepeatsRecord
from pytest_omk.models.run import SampleRun
from pytest_omk.report.records import assertion_records, execution_record, rubric_records


def repeated_parts(
    sample: Sample,
    runs: list[SampleRun],
    graded: Verdict,
    repeats: Repeats,
    mask: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """The graded parts of a repeated sample's record, as JSON values (the first run's execution
    stands for all). Each entry with its tallies goes through its model, which puts the keys in
    the record's order."""
    assertions = [
        AssertionEntry.model_validate({**entry, "runs": tally}).model_dump(mode="json")
        for entry, tally in zip(
            assertion_records(list(sample.assertions or []), graded.readings), repeats.tallies, strict=True
        )
    ]
    return {
        "scores": LayerScores.model_validate(repeats.scores).model_dump(mode="json"),
        "assertions": assertions,
        "rubric": {
            name: RubricEntry.model_validate({**entry, **repeats.rubric_detail[name]}).model_dump(mode="json")
            for name, entry in rubric_records(sample, graded.rubric).items()
        },
        "execution": execution_record(runs[0].execution, mask),
        "urls": list(runs[0].resolved.urls),
        "repeats": RepeatsRecord.model_validate(repeats.record).model_dump(mode="json"),
    }
