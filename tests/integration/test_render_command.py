"""``python -m pytest_omk render REPORT.json [--html PATH] [--markdown PATH]``: any report file,
merged shards included, rendered exactly as the run that wrote it rendered its own."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support import FakeCommand, OmkRun, executor_arg, omk_command, sample, write_sample_set

TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?")


def render(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return omk_command(cwd, "render", *args)


def without_timestamps(path: Path) -> str:
    return TIMESTAMP.sub("<time>", path.read_text(encoding="utf-8"))


@pytest.fixture
def run_reports(pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand) -> Path:
    write_sample_set(
        pytester,
        sample("ok", "hi", assertions=[{"type": "contains", "value": "fine"}], capability=["greeting"]),
        sample("bad", "hi", assertions=[{"type": "contains", "value": "absent"}], difficulty="hard"),
    )
    spec = fake_command.script({"ok": {"output": "fine", "costUSD": 0.001}, "bad": {"output": "<b>|x|</b>"}})
    omk_run(executor_arg(spec), "--omk-report=run.json", "--omk-html=run.html", "--omk-markdown=run.md")
    return pytester.path


def test_render_equals_the_runs_own_reports(run_reports: Path) -> None:
    done = render(run_reports, "run.json", "--html", "out/again.html", "--markdown", "out/again.md")
    assert done.returncode == 0, done.stderr
    assert without_timestamps(run_reports / "out" / "again.html") == without_timestamps(
        run_reports / "run.html"
    )
    assert without_timestamps(run_reports / "out" / "again.md") == without_timestamps(run_reports / "run.md")


def test_render_needs_an_output_and_a_report(run_reports: Path) -> None:
    nothing = render(run_reports, "run.json")
    assert nothing.returncode == 4 and "--html" in nothing.stderr and "Traceback" not in nothing.stderr
    (run_reports / "other.json").write_text('{"hello": 1}', encoding="utf-8")
    wrong = render(run_reports, "other.json", "--html", "x.html")
    assert wrong.returncode == 4 and "other.json is not a pytest-omk report" in wrong.stderr
    assert "Traceback" not in wrong.stderr and not (run_reports / "x.html").exists()


def test_render_a_merged_report(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_sample_set(
        pytester,
        *(sample(f"s{i}", f"p{i}", assertions=[{"type": "contains", "value": "p"}]) for i in range(4)),
    )
    spec = fake_command.script({f"s{i}": {"output": f"p{i}"} for i in range(4)})
    for k in (1, 2):
        omk_run(executor_arg(spec), f"--omk-shard={k}/2", f"--omk-report=shard-{k}.json")
    merged = omk_command(pytester.path, "merge", "shard-1.json", "shard-2.json", "-o", "merged.json")
    assert merged.returncode == 0, merged.stderr
    done = render(pytester.path, "merged.json", "--html", "merged.html", "--markdown", "merged.md")
    assert done.returncode == 0, done.stderr
    html = (pytester.path / "merged.html").read_text(encoding="utf-8")
    assert html.count('<tr class="sample"') == 4
    assert (
        (pytester.path / "merged.md")
        .read_text(encoding="utf-8")
        .startswith("## pytest-omk: 4 samples, 4 passed")
    )
