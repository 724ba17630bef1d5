"""A graded sample's record parts are written as the record model itself would write them.

``fill_record`` builds the parts as JSON values directly instead of building and dumping a
:class:`~pytest_omk.models.report.SampleRecord` around them; the wire form must be what the model
writes, key for key and in its order, for a single run (optional keys absent and present) and for
a repeated sample (tallies, spreads, runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_omk.grade.verdict import verdict
from pytest_omk.models import Sample
from pytest_omk.models.report import SampleRecord
from pytest_omk.models.results import ExecutionResult, Reading, ToolCall
from pytest_omk.models.run import ExecutionRequest, JudgeOutcome, ResolvedText, SampleRun
from pytest_omk.plugin.subtests import fill_record
from pytest_omk.report.records import metadata_of, new_record
from tests.support.grading import ENGINE


class Rules:
    strict, min_composite, min_pass_rate = False, None, 0.5


SAMPLE = Sample.model_validate(
    {
        "sample_id": "s1",
        "prompt": "Review the patch.",
        "assertions": [
            {"type": "contains", "value": "risk"},
            {"type": "tools_called", "values": ["Bash"]},
            {"type": "max_length", "value": 500, "weight": 0.5},
        ],
        "rubric": {
            "clarity": {"criterion": "clear", "weight": 0.6},
            "depth": {"criterion": "deep", "weight": 0.4},
        },
    }
)


def _run(
    output: str, *, score: int | None, tokens: int | None, tools: list[dict[str, Any]] | None = None
) -> SampleRun:
    rubric = (
        {}
        if score is None
        else {"clarity": Reading.passed("fine", score), "depth": Reading.passed("ok", score)}
    )
    execution = ExecutionResult(
        output=output,
        costUSD=0.0012,
        latencyMs=12.5,
        inputTokens=10,
        outputTokens=tokens,
        cacheReadTokens=tokens,
        replayed=True,
        toolCalls=None if tools is None else [ToolCall.model_validate(t) for t in tools],
    )
    return SampleRun(
        execution,
        JudgeOutcome(rubric=rubric, calls=2, replayed=2),
        ResolvedText("p", None),
        ExecutionRequest("p"),
    )


def _as_the_model_writes(filled: dict[str, Any]) -> dict[str, Any]:
    # The parts read back by the whole record's model and written again: a key the model would
    # leave out, a value it would change or an order it would not keep all show here.
    record = SampleRecord.model_validate({"nodeid": "x", "file": "f", "sample_id": "s1", **filled})
    dumped: dict[str, Any] = record.model_dump(mode="json", include=set(filled))
    return dumped


def _parts(record: dict[str, Any]) -> dict[str, Any]:
    # Each part with its keys in order (the record's own top-level order is set in setup).
    return {name: _key_orders(part) for name, part in record.items()}


def _key_orders(value: Any) -> Any:
    if isinstance(value, dict):
        return [(key, _key_orders(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_key_orders(item) for item in value]
    return value


def _filled(runs: list[SampleRun]) -> dict[str, Any]:
    wire: dict[str, Any] = {"nodeid": "x"}
    fill_record(wire, SAMPLE, runs, verdict(SAMPLE, Path("."), runs, Rules(), ENGINE))
    del wire["nodeid"]
    return wire


def test_a_single_run_is_written_as_the_whole_record_would_write_it() -> None:
    runs = [_run("risk: low", score=4, tokens=7)]
    filled = _filled(runs)
    assert _parts(filled) == _parts(_as_the_model_writes(filled))
    # The optional keys: a missing reading's cause and the executor's extra counts are written only when set.
    assert filled["assertions"][1]["cause"] == "no-trace" and "cause" not in filled["assertions"][0]
    assert filled["execution"]["cacheReadTokens"] == 7 and "numSubAgents" not in filled["execution"]


def test_a_trace_is_written_as_the_whole_record_would_write_it() -> None:
    runs = [_run("risk: low", score=4, tokens=7, tools=[{"tool": "bash", "input": {"cmd": ("ls", "-a")}}])]
    filled = _filled(runs)
    assert _parts(filled) == _parts(_as_the_model_writes(filled))
    assert filled["execution"]["toolCalls"] == [
        {"tool": "Bash", "input": {"cmd": ["ls", "-a"]}, "success": True}
    ]


def test_a_repeated_sample_is_written_as_the_whole_record_would_write_it() -> None:
    runs = [
        _run("risk: low", score=4, tokens=None),
        _run("no", score=None, tokens=3),
        _run("risk", score=2, tokens=1),
    ]
    filled = _filled(runs)
    assert _parts(filled) == _parts(_as_the_model_writes(filled))
    assert filled["repeats"]["n"] == 3 and filled["assertions"][0]["runs"] == {
        "pass": 2,
        "fail": 1,
        "missing": 0,
    }
    assert "readings" in filled["rubric"]["clarity"]


def test_a_record_part_with_optional_keys_must_have_the_serializer_that_leaves_them_out() -> None:
    import pytest
    from pydantic import BaseModel

    from pytest_omk.models import report

    with pytest.raises(TypeError, match="_WithOptionalKeys"):
        type(
            "Part",
            (report._Record,),
            {"__annotations__": {"x": "int | None"}, "x": None, "OPTIONAL_KEYS": ("x",)},
        )
    part = type(
        "Part",
        (report._WithOptionalKeys,),
        {"__annotations__": {"x": int | None}, "x": None, "OPTIONAL_KEYS": ("x",), "__module__": __name__},
    )
    assert (
        issubclass(part, BaseModel) and part().model_dump() == {} and part(x=None).model_dump() == {"x": None}
    )


def test_a_new_record_is_the_wire_form_of_the_record_model() -> None:
    sample = Sample.model_validate(
        {
            "sample_id": "s2",
            "prompt": "p",
            "capability": ["triage"],
            "difficulty": "easy",
            "tripwire": True,
            "assertions": [{"type": "contains", "value": "x"}],
        }
    )
    made = new_record(
        nodeid="f::s2", file="f", sample=sample, variant="B", executor="openai", model="m", order=3
    )
    expected = SampleRecord(
        nodeid="f::s2",
        file="f",
        sample_id="s2",
        prompt="p",
        variant="B",
        executor="openai",
        model="m",
        metadata=metadata_of(sample),
        order=3,
    ).wire()
    assert _key_orders(made) == _key_orders(expected)
    assert made["metadata"] == {"capability": ["triage"], "difficulty": "easy", "tripwire": True}
