"""``python -m pytest_omk merge`` never turns failed shards green.

The merged exit status is the worst of the shards' (a failed ordinary test, a collection error or
an internal error included); each sample's outcome is recomputed from its readings, not trusted;
shards of another sample set or configuration are refused; hostile reports are exit 4, one line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import OmkRun, sample, write_sample_set

FAILING_TEST = "def test_ok():\n    assert True\n\ndef test_broken():\n    assert False\n"


def merge(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_omk", "merge", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 4, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_sample_set(
        pytester,
        *(
            sample(f"s{i}", f"say {i}", assertions=[{"type": "contains", "value": f"say {i}"}])
            for i in range(3)
        ),
        sample("bad", "say bad", assertions=[{"type": "contains", "value": "never"}]),
    )
    return pytester


def shards(omk_run: OmkRun, *extra: str) -> list[str]:
    names = []
    for k in (1, 2):
        omk_run("--omk-executor=echo", f"--omk-shard={k}/2", f"--omk-report=shard-{k}.json", *extra)
        names.append(f"shard-{k}.json")
    return names


def edit(path: Path, change: Any) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")


def test_a_failed_ordinary_test_in_a_shard_fails_the_merge(project: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(project, *(sample(f"s{i}", f"say {i}") for i in range(3)))  # every sample passes
    project.makepyfile(test_plain=FAILING_TEST)
    names = shards(omk_run)
    result = merge(project.path, *names, "-o", "merged.json")
    assert result.returncode == 1, result.stderr
    assert json.loads((project.path / "merged.json").read_text(encoding="utf-8"))["exitStatus"] == 1


def test_a_collection_error_in_a_shard_is_the_merge_status(project: pytest.Pytester, omk_run: OmkRun) -> None:
    (project.path / "broken").mkdir()
    (project.path / "broken" / "eval-samples.json").write_text("{not json", encoding="utf-8")
    names = shards(omk_run)
    assert merge(project.path, *names).returncode == pytest.ExitCode.INTERRUPTED


def test_an_internal_error_in_a_shard_is_the_merge_status(project: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(project, *(sample(f"s{i}", f"say {i}") for i in range(3)))
    names = shards(omk_run)
    edit(project.path / names[1], lambda doc: doc.update(exitStatus=3))
    assert merge(project.path, *names).returncode == pytest.ExitCode.INTERNAL_ERROR


def test_a_sample_outcome_is_recomputed_not_trusted(project: pytest.Pytester, omk_run: OmkRun) -> None:
    names = shards(omk_run)

    def whitewash(doc: dict[str, Any]) -> None:
        for row in doc["samples"]:
            row["outcome"] = "passed"
        doc["exitStatus"] = 0

    for name in names:
        edit(project.path / name, whitewash)
    result = merge(project.path, *names, "-o", "merged.json")
    assert result.returncode == 1, result.stderr
    merged = json.loads((project.path / "merged.json").read_text(encoding="utf-8"))
    assert {row["sample_id"]: row["outcome"] for row in merged["samples"]}["bad"] == "failed"
    assert merged["summary"]["outcomes"] == {"passed": 3, "failed": 1}


def test_a_stale_shard_of_another_sample_set_is_refused(project: pytest.Pytester, omk_run: OmkRun) -> None:
    omk_run("--omk-executor=echo", "--omk-shard=1/2", "--omk-report=shard-1.json")
    write_sample_set(
        project, *(sample(f"s{i}", f"say {i}, edited") for i in range(3)), sample("bad", "say bad")
    )
    omk_run("--omk-executor=echo", "--omk-shard=2/2", "--omk-report=shard-2.json")
    line = one_line_error(merge(project.path, "shard-1.json", "shard-2.json"))
    assert "shard-2.json" in line and "shard-1.json" in line and "sample set" in line


def test_a_deeply_nested_report_is_one_line(project: pytest.Pytester, omk_run: OmkRun) -> None:
    names = shards(omk_run)
    deep = "[" * 100_000 + "]" * 100_000
    text = (project.path / names[0]).read_text(encoding="utf-8")
    (project.path / names[0]).write_text(
        text.replace('"samples": [', f'"samples": [{deep}, ', 1), encoding="utf-8"
    )
    assert names[0] in one_line_error(merge(project.path, *names))


def test_a_non_numeric_exit_status_is_one_line(project: pytest.Pytester, omk_run: OmkRun) -> None:
    names = shards(omk_run)
    edit(project.path / names[1], lambda doc: doc.update(exitStatus="three"))
    line = one_line_error(merge(project.path, *names))
    assert names[1] in line and "exitStatus" in line
