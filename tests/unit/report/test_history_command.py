"""``render --history``'s command line: usage errors are one line and exit 4; writing failures exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_omk.__main__ import main

REPORT = {
    "schemaVersion": "pytest-omk.report/v1", "config": {}, "summary": {}, "startedAt": "2026-01-01T00:00:00+00:00",
    "samples": [{"nodeid": "f.json::a", "outcome": "passed", "scores": {"composite": 5}}],
}  # fmt: skip


@pytest.fixture
def report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.json").write_text(json.dumps(REPORT), encoding="utf-8")
    return "r.json"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["render"], "give a REPORT to render, or --history REPORT…"),
        (["render", "--history", "r.json"], "nothing to write"),
        (
            ["render", "--history", "r.json", "--json", "t.json", "--window", "0"],
            "--window must be a whole number",
        ),
        (["render", "--history", "r.json", "--json", "t.json", "--window", "x"], "not 'x'"),
        (["render", "r.json", "--json", "t.json"], "--json and --window go with --history"),
        (["render", "r.json", "--history", "r.json", "--json", "t.json"], "give r.json after --history"),
        (
            ["render", "--history", "r.json", "sub/../r.json", "--json", "t.json"],
            "sub/../r.json is given twice (as r.json too)",
        ),
        (["render", "--history", "missing.json", "--json", "t.json"], "cannot read missing.json"),
    ],
)
def test_usage_errors_are_one_line_and_exit_4(
    report: str, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 4
    err = capsys.readouterr().err.strip()
    assert err.startswith("pytest-omk render: ") and message in err and "\n" not in err, err
    assert not Path("t.json").exists()


def test_an_output_that_cannot_be_written_exits_1_and_the_others_are_written(
    report: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "blocked").write_text("a file, not a folder", encoding="utf-8")
    assert main(["render", "--history", report, "--html", "blocked/t.html", "--json", "t.json"]) == 1
    err = capsys.readouterr().err
    assert "cannot write blocked/t.html" in err and "written to t.json" in err
    trend = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert [s["state"] for s in trend["samples"]] == ["stable"] and trend["sliding"] == []


def test_without_history_render_reads_its_one_report_as_before(
    report: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # This hand-made report lacks what a run writes: the one-report render's full validation
    # refuses it, where the trend (which reads only what it needs) accepted it above.
    assert main(["render", report, "--markdown", "one.md"]) == 4
    err = capsys.readouterr().err
    assert err.startswith("pytest-omk render: r.json: ") and "--history" not in err
    assert not Path("one.md").exists()
