"""``python -m pytest_omk gold init``: a blind skeleton and a labelling page from a report.

The reports here are written by hand as a hostile party would (markup, bidi and control characters
in ids and outputs, broken records), and once by a real recorded run.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_omk.loading.gold import load_gold
from pytest_omk.models.report import SampleRecord
from pytest_omk.report.gold_init import stratified
from tests.fakes.fake_llm import FakeLLM
from tests.integration.test_gold_e2e import JUDGE, record, replay
from tests.support import OmkRun
from tests.support.commands import omk_command

HOSTILE_ID = 'x</section><script>alert(1)</script>\u202e\x1b[31m"\u2028yes'
HOSTILE_OUTPUT = "<img src=x onerror=alert(1)> \u202egnp.exe \x1b[2J </pre></main>"


def sample(sample_id: str, judge: float | None, output: str = "an answer", **more: Any) -> dict[str, Any]:
    return {
        "nodeid": f"eval-samples.json::{sample_id}",
        "file": "eval-samples.json",
        "sample_id": sample_id,
        "prompt": f"question about {sample_id}",
        "scores": {"judge": judge},
        "rubric": {
            "quality": {"score": judge, "weight": 1, "reason": "JUDGE-REASON-SECRET", "status": "pass"}
        }
        if judge is not None
        else {},
        "execution": {"output": output},
        **more,
    }


def report(path: Path, samples: list[dict[str, Any]]) -> Path:
    document = {"schemaVersion": "pytest-omk.report/v1", "config": {}, "summary": {}, "samples": samples}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_the_skeleton_is_blind_and_loads_once_scored(tmp_path: Path) -> None:
    source = report(
        tmp_path / "r.json", [sample("a", 4.5), sample("b", None), sample("2026-01-01", 2), sample("yes", 1)]
    )
    done = omk_command(tmp_path, "gold", "init", "r.json", "gold", "--annotator", "team")
    assert done.returncode == 0, done.stderr
    assert "3 samples to label in gold" in done.stderr
    text = (tmp_path / "gold" / "annotations.yaml").read_text(encoding="utf-8")
    assert "JUDGE-REASON-SECRET" not in text and "4.5" not in text  # blind: no judge score or reason
    data = yaml.safe_load(text)
    assert [row["sample_id"] for row in data["annotations"]] == ["a", "2026-01-01", "yes"]
    with pytest.raises(Exception, match=r"annotations\[0\]: score is required"):
        load_gold(tmp_path / "gold")  # not labelled yet: refused, never read as zeros
    (tmp_path / "gold" / "annotations.yaml").write_text(
        text.replace("score: null", "score: 3"), encoding="utf-8"
    )
    loaded = load_gold(tmp_path / "gold")  # the quoted date-like and yes/no ids stay strings
    assert [a.sample_id for a in loaded.annotations] == ["a", "2026-01-01", "yes"]
    assert loaded.metadata.annotator == "team"
    assert source.exists()


def test_it_refuses_to_overwrite_and_names_a_broken_record(tmp_path: Path) -> None:
    report(tmp_path / "r.json", [sample("a", 4)])
    (tmp_path / "gold").mkdir()
    (tmp_path / "gold" / "mine.yaml").write_text("annotations: []\n", encoding="utf-8")
    done = omk_command(tmp_path, "gold", "init", "r.json", "gold")
    assert done.returncode == 4 and "already has YAML files (mine.yaml)" in done.stderr
    report(tmp_path / "bad.json", [sample("a", 4), {"nodeid": "n", "sample_id": ["not", "a", "string"]}])
    done = omk_command(tmp_path, "gold", "init", "bad.json", "fresh")
    assert done.returncode == 4 and "bad.json: samples[1] is not a pytest-omk record" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "fresh").exists()
    os.mkfifo(tmp_path / "pipe.json")  # reading it would wait for a writer forever
    done = omk_command(tmp_path, "gold", "init", "pipe.json", "fresh")
    assert done.returncode == 4 and "pipe.json is not a regular file" in done.stderr
    (tmp_path / "nested.json").write_text("[" * 100_000, encoding="utf-8")
    done = omk_command(tmp_path, "gold", "init", "nested.json", "fresh")
    assert done.returncode == 4 and "Traceback" not in done.stderr


def test_the_labelling_page_escapes_hostile_text_under_the_report_policy(tmp_path: Path) -> None:
    report(tmp_path / "r.json", [sample(HOSTILE_ID, 3, HOSTILE_OUTPUT), sample("plain", 5)])
    done = omk_command(tmp_path, "gold", "init", "r.json", "gold", "--html", "label.html")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "label.html").read_text(encoding="utf-8")
    assert "default-src 'none'" in page and "script-src 'sha256-" in page
    assert page.count("<script>") == 1 and "<img" not in page and "alert(1)</script>" not in page
    for raw in ("\u202e", "\x1b", "\u2028"):
        assert raw not in page
    assert "JUDGE-REASON-SECRET" not in page and "data-score" in page
    ids = [json.loads(m.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&#x27;", "'"))
           for m in re.findall(r'data-id="([^"]*)"', page)]  # fmt: skip
    assert ids == [HOSTILE_ID, "plain"]  # the attribute carries the exact id back to the script


def test_sample_is_stratified_across_judge_scores() -> None:
    records = [
        SampleRecord.of(sample(f"s{i}", score))
        for i, score in enumerate([5] * 40 + [4] * 30 + [2] * 5 + [1] * 2)
    ]
    chosen = stratified(records, 8, seed=3)
    assert Counter(r.scores.judge for r in chosen) == {1: 2, 2: 2, 4: 2, 5: 2}
    assert chosen == stratified(records, 8, seed=3) and chosen != stratified(records, 8, seed=4)
    assert [r.sample_id for r in chosen] == sorted((r.sample_id for r in chosen), key=lambda s: int(s[1:]))


def test_from_a_recorded_run_the_labels_close_the_loop(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    record(pytester, omk_run, fake_llm, monkeypatch, JUDGE)
    replay(omk_run, "--omk-report=r.json")
    done = omk_command(pytester.path, "gold", "init", "r.json", "labels", "--sample", "5", "--seed", "1")
    assert done.returncode == 0, done.stderr
    path = pytester.path / "labels" / "annotations.yaml"
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))["annotations"]
    assert len(rows) == 5
    path.write_text(yaml.safe_dump({"annotations": [{**r, "score": 3} for r in rows]}), encoding="utf-8")
    result = replay(omk_run, "--omk-gold=labels")
    assert "judge agreement: 5 pairs" in result.stdout.str()
