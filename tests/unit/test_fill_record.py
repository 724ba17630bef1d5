"""A graded sample's record parts are written as the record model itself would write them.

``fill_record`` dumps each part with its own model instead of building a whole
:class:`~pytest_omk.models.report.SampleRecord` around them; the wire form must not change, for a
single run (optional keys absent and present) and for a repeated sample (tallies, spreads, runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_omk.grade.verdict import verdict
from pytest_omk.models import Sample
from pytest_omk.models.report import SampleRecord
from pytest_omk.models.results import ExecutionResult, Reading
from pytest_omk.models.run import ExecutionRequest, JudgeOutcome, ResolvedText, SampleRun
from pytest_omk.report.records import assertion_records, execution_record, model_calls, rubric_records
from pytest_omk.report.repeated import repeated_parts
from pytest_omk.report.subtests import fill_record
from tests.unit._grading import ENGINE


class Rules:
    strict, min_composite, min_pass_rate = False, None, 0.5


SAMPLE = Sample.model_validate({
    "sample_id": "s1",
    "prompt": "Review the patch.",
    "assertions": [
        {"type": "contains", "value": "risk"},
        {"type": "tools_called", "values": ["Bash"]},
        {"type": "max_length", "value": 500, "weight": 0.5},
    ],
    "rubric": {"clarity": {"criterion": "clear", "weight": 0.6}, "depth": {"criterion": "deep", "weight": 0.4}},
})


def _run(output: str, *, score: int | None, tokens: int | None) -> SampleRun:
    rubric = {} if score is None else {"clarity": Reading.passed("fine", score), "depth": Reading.passed("ok", score)}
    execution = ExecutionResult(output=output, costUSD=0.0012, latencyMs=12.5, inputTokens=10, outputTokens=tokens,
                                cacheReadTokens=tokens, replayed=True)
    return SampleRun(execution, JudgeOutcome(rubric=rubric, calls=2, replayed=2), ResolvedText("p", None),
                     ExecutionRequest("p"))


def _whole_record_dump(runs: list[SampleRun]) -> dict[str, Any]:
    # What fill_record wrote before: a SampleRecord built around the parts, dumped whole.
    graded = verdict(SAMPLE, Path("."), runs, Rules(), ENGINE)
    if graded.repeats is not None:
        parts = repeated_parts(SAMPLE, runs, graded, graded.repeats)
    else:
        from pytest_omk.grade.scoring import scores_record
        from pytest_omk.models.report import LayerScores

        parts = {
            "scores": LayerScores.model_validate(scores_record(graded.runs[0].scores)),
            "assertions": assertion_records(list(SAMPLE.assertions or []), graded.readings),
            "rubric": rubric_records(SAMPLE, graded.rubric),
            "execution": execution_record(runs[0].execution),
            "urls": list(runs[0].resolved.urls),
            "modelCalls": model_calls(runs[0]),
        }
    dumped: dict[str, Any] = SampleRecord.model_construct(**parts).model_dump(mode="json", include=set(parts))
    return dumped


def _filled(runs: list[SampleRun]) -> dict[str, Any]:
    wire: dict[str, Any] = {"nodeid": "x"}
    fill_record(wire, SAMPLE, runs, verdict(SAMPLE, Path("."), runs, Rules(), ENGINE))
    del wire["nodeid"]
    return wire


def test_a_single_run_is_written_as_the_whole_record_would_write_it() -> None:
    runs = [_run("risk: low", score=4, tokens=7)]
    filled = _filled(runs)
    assert filled == _whole_record_dump(runs)
    # The optional keys: a missing reading's cause and the executor's extra counts are written only when set.
    assert filled["assertions"][1]["cause"] == "no-trace" and "cause" not in filled["assertions"][0]
    assert filled["execution"]["cacheReadTokens"] == 7 and "numSubAgents" not in filled["execution"]


def test_a_repeated_sample_is_written_as_the_whole_record_would_write_it() -> None:
    runs = [_run("risk: low", score=4, tokens=None), _run("no", score=None, tokens=3), _run("risk", score=2, tokens=1)]
    filled = _filled(runs)
    assert filled == _whole_record_dump(runs)
    assert filled["repeats"]["n"] == 3 and filled["assertions"][0]["runs"] == {"pass": 2, "fail": 1, "missing": 0}
    assert "readings" in filled["rubric"]["clarity"]


def test_a_record_part_with_optional_keys_must_have_the_serializer_that_leaves_them_out() -> None:
    import pytest
    from pydantic import BaseModel

    from pytest_omk.models import report

    with pytest.raises(TypeError, match="_WithOptionalKeys"):
        type("Part", (report._Record,), {"__annotations__": {"x": "int | None"}, "x": None, "OPTIONAL_KEYS": ("x",)})
    part = type("Part", (report._WithOptionalKeys,), {"__annotations__": {"x": int | None}, "x": None,
                                                       "OPTIONAL_KEYS": ("x",), "__module__": __name__})
    assert issubclass(part, BaseModel) and part().model_dump() == {} and part(x=None).model_dump() == {"x": None}
