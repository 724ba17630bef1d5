"""A shard whose sample is not a pytest-omk record is a usage error naming the file, not a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_omk.errors import ConfigError
from pytest_omk.models.report import SampleRecord
from pytest_omk.report.merge import merge_reports
from pytest_omk.report.terminal import summarize

SCORES = {"assertions": 5, "fact": 5, "behavior": None, "judge": None, "composite": 5}


def _shard(path: Path, k: int, score: float) -> Path:
    record = SampleRecord(nodeid=f"f.yaml::s{k}", file="f.yaml", sample_id=f"s{k}", outcome="passed")
    sample = {**record.reported(), "scores": {**SCORES, "composite": score}}
    document = {
        "schemaVersion": "pytest-omk.report/v1",
        "plugin": {"name": "pytest-omk", "version": "0.1.0"},
        "config": {"shard": f"{k}/2"},
        "summary": summarize([record.reported()]),
        "samples": [sample],
        "collection": {"items": 2, "digest": "sha256:" + "0" * 64},
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_shard_sample_out_of_range_is_named(tmp_path: Path) -> None:
    good, bad = _shard(tmp_path / "a.json", 1, 5), _shard(tmp_path / "b.json", 2, 9)
    with pytest.raises(
        ConfigError,
        match=r"b\.json: samples\[0\]\.scores\.composite: Input should be less than or equal to 5",
    ):
        merge_reports([good, bad], cwd=tmp_path)


def test_valid_shards_merge(tmp_path: Path) -> None:
    merged = merge_reports(
        [_shard(tmp_path / "a.json", 1, 5), _shard(tmp_path / "b.json", 2, 4)], cwd=tmp_path
    )
    assert [s["sample_id"] for s in merged.document["samples"]] == ["s1", "s2"]
