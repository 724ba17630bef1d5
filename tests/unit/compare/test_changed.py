"""The per-sample input digest of ``--omk-changed`` (pytest_omk.compare.changed)."""

from __future__ import annotations

from pathlib import Path

from pytest_omk.compare.changed import RunInputs, carried_records, carry, input_digest
from pytest_omk.models import Sample

RUN = RunInputs(plugin_version="1", executor="openai", model="m", endpoint="https://api.example/v1")


def make(**fields: object) -> Sample:
    return Sample.model_validate({"sample_id": "s", "prompt": "hi", **fields})


def digest(sample: Sample, tmp_path: Path, system: str | None = None, run: RunInputs = RUN) -> str:
    return input_digest(sample, system=system, base_dir=tmp_path, run=run)


def test_same_inputs_same_digest(tmp_path: Path) -> None:
    assert digest(make(), tmp_path) == digest(make(), tmp_path)


def test_every_input_changes_the_digest(tmp_path: Path) -> None:
    base = digest(make(), tmp_path)
    assert digest(make(prompt="hello"), tmp_path) != base
    assert digest(make(), tmp_path, system="be brief") != base
    assert digest(make(assertions=[{"type": "contains", "value": "x"}]), tmp_path) != base
    for changed in (
        RunInputs("2", "openai", "m", "https://api.example/v1"),
        RunInputs("1", "anthropic", "m", "https://api.example/v1"),
        RunInputs("1", "openai", "m2", "https://api.example/v1"),
        RunInputs("1", "openai", "m", "http://127.0.0.1:8080/v1"),
        RunInputs("1", "openai", "m", "https://api.example/v1", judge="openai", judge_model="j"),
        RunInputs("1", "openai", "m", "https://api.example/v1", options={"repeat": 3}),
        RunInputs("1", "openai", "m", "https://api.example/v1", app_digest="abc"),
    ):
        assert digest(make(), tmp_path, run=changed) != base


def test_custom_check_and_mock_files_are_hashed(tmp_path: Path) -> None:
    check = tmp_path / "check.py"
    check.write_text("def check(output, context):\n    return True\n", encoding="utf-8")
    sample = make(assertions=[{"type": "custom", "fn": "check.py"}])
    before = digest(sample, tmp_path)
    check.write_text("def check(output, context):\n    return False\n", encoding="utf-8")
    assert digest(sample, tmp_path) != before


def test_carry_only_results_with_the_same_digest() -> None:
    baseline = {
        "samples": [
            {"file": "f", "sample_id": "a", "outcome": "passed", "inputDigest": "1"},
            {"file": "f", "sample_id": "b", "outcome": "error", "inputDigest": "2"},
            {"file": "f", "sample_id": "c", "outcome": "failed"},
        ]
    }
    records = carried_records(baseline)
    assert list(records) == [("f", "a", None)]
    assert carry(records[("f", "a", None)], "1") is not None
    assert carry(records[("f", "a", None)], "other") is None
    assert carry(None, "1") is None
