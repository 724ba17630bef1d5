"""Reading a report file handed in from elsewhere: each refusal names the file and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.errors import ConfigError
from pytest_omk.loading.report_file import field_path, non_finite, read_report, read_valid_report
from pytest_omk.models.report import SampleRecord
from pytest_omk.report.terminal import summarize


def report(**parts: Any) -> dict[str, Any]:
    record = SampleRecord(nodeid="f.yaml::s", file="f.yaml", sample_id="s", outcome="passed").reported()
    return {
        "schemaVersion": "pytest-omk.report/v1",
        "plugin": {"name": "pytest-omk", "version": "0.1.0"},
        "config": {},
        "summary": summarize([record]),
        "samples": [record],
        **parts,
    }


def write(tmp_path: Path, document: Any, text: str | None = None) -> Path:
    path = tmp_path / "r.json"
    path.write_text(text if text is not None else json.dumps(document), encoding="utf-8")
    return path


def test_a_valid_report_reads_with_its_samples_as_records(tmp_path: Path) -> None:
    document = read_valid_report(write(tmp_path, report()))
    assert document["samples"][0]["sample_id"] == "s" and "carried" in document["samples"][0]


@pytest.mark.parametrize("number", ["NaN", "-Infinity", "1e999"])
def test_a_non_finite_number_is_named_by_its_field(tmp_path: Path, number: str) -> None:
    text = json.dumps(report(extra={"deep": [1, "@"]})).replace('"@"', number)
    with pytest.raises(ConfigError, match=r"r\.json: extra\.deep\[1\]: .* is not a finite number"):
        read_report(write(tmp_path, None, text))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"summary": []}, r"r\.json: summary must be an object, not a list"),
        ({"config": {"minPassRate": "1"}}, r"r\.json: config\.minPassRate: Input should be a valid integer or a valid number"),
        ({"samples": [{"nodeid": "x"}]}, r"r\.json: samples\[0\]\.file: Field required"),
        ({"samples": ["x"]}, r"r\.json: samples\[0\] must be an object"),
        ({"variants": [{"name": 1}]}, r"r\.json: variants\[0\]"),
    ],
)  # fmt: skip
def test_a_value_its_writer_could_not_have_written_is_refused(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        read_valid_report(write(tmp_path, report(**change)))


def test_field_paths_are_short_and_visible() -> None:
    assert field_path(["samples", 3, "scores", "composite"]) == "samples[3].scores.composite"
    assert field_path(["a\x1b[2Jb"]) == "a\\x1b[2Jb"
    assert len(field_path(["x" * 500])) <= 120
    assert non_finite({"a": [1.5, {"b": float("inf")}]}) == ("a[1].b", float("inf"))
    assert non_finite({"a": 1e308}) is None
