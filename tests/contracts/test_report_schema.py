"""The report schema's per-sample part is generated from the typed record, and the record writes what it says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_omk.models import report_schema
from pytest_omk.models.report import AssertionEntry, ExecutionRecord, RubricEntry, SampleRecord
from pytest_omk.models.schema_export import main, render, schema_files

REPO = Path(__file__).resolve().parents[2]


def _validator() -> jsonschema.protocols.Validator:
    schema = report_schema.build_report_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    # Validate one record against the "sample" definition, resolved inside the whole document.
    return cls({"$ref": "#/$defs/sample", "$defs": schema["$defs"]})


def _record(**changes: Any) -> SampleRecord:
    record = SampleRecord(
        nodeid="f.yaml::s1", file="f.yaml", sample_id="s1", prompt="p", outcome="passed", order=3
    )
    record.assertions = [
        AssertionEntry(index=0, type="contains", layer="fact", weight=1, status="pass", message="ok")
    ]
    record.rubric = {"tone": RubricEntry(score=4, weight=1, reason="fine", status="pass")}
    record.execution = ExecutionRecord(output="hi", costUSD=0.5, cacheReadTokens=7)
    for key, value in changes.items():
        setattr(record, key, value)
    return record


def test_both_committed_copies_are_the_generated_schema() -> None:
    expected = render(report_schema.build_report_schema())
    for file in schema_files(REPO, report_schema.RELATIVE_PATH):
        assert file.read_text(encoding="utf-8") == expected, (
            f"{file} is stale: run python -m pytest_omk.models.schema_export"
        )


def test_check_mode_names_a_stale_report_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for relative, text in (
        (Path("schemas/eval-samples/v2/eval-sample-set.schema.json"), None),
        (report_schema.RELATIVE_PATH, "{}\n"),
    ):
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        source = REPO / relative
        target.write_text(text if text is not None else source.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert f"out of date: {tmp_path / report_schema.RELATIVE_PATH}" in capsys.readouterr().err


def test_the_record_keeps_ints_null_and_absent_apart() -> None:
    reported = _record().reported()
    assert "order" not in reported
    assert reported["assertions"][0]["weight"] == 1 and isinstance(reported["assertions"][0]["weight"], int)
    assert "runs" not in reported["assertions"][0]
    assert reported["execution"]["cacheReadTokens"] == 7 and "fullNumTurns" not in reported["execution"]
    assert reported["error"] is None and reported["repeats"] is None
    # The wire form carries the order; reading it back gives the same report.
    wire = _record().wire()
    assert wire["order"] == 3
    assert json.dumps(SampleRecord.of(wire).reported()) == json.dumps(reported)


def test_the_generated_sample_definition_accepts_records_and_rejects_strays() -> None:
    validator = _validator()
    assert not list(validator.iter_errors(_record().reported()))
    stray = _record().reported()
    stray["assertions"][0]["reasonText"] = "x"
    missing = _record().reported()
    del missing["modelCalls"]
    bad_score = _record().reported()
    bad_score["rubric"]["tone"]["score"] = 9
    for document in (stray, missing, bad_score):
        assert list(validator.iter_errors(document)), document
