"""``--omk-shard K/N`` and ``python -m pytest_omk merge``: three shards merged equal one run,
field for field (summary, variants, comparisons, repeats, coverage and the baseline gate), apart
from the timing fields; and bad input to either is a short clear error."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support import OmkRun, load_report, omk_command, sample, write_sample_set
from tests.support.reports import normalised

EXECUTOR = """
import os

def answer(request):
    # Output depends on the variant (system prompt), the repeat index and the mode of the run.
    good = os.environ.get("ANSWER_MODE") == "good"
    words = [request.system or "", request.prompt, "always" if good else f"r{request.repeat}"]
    return {"output": " ".join(words), "costUSD": 0.001 * (1 + request.repeat), "numTurns": 1}
"""


def checks(i: int) -> list[dict[str, object]]:
    return [
        {"type": "contains", "value": "concise"},
        {"type": "contains_any", "values": ["always", "r0" if i % 2 else "r1"]},
        {"type": "max_length", "value": 40 + 5 * i},
    ]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.syspathinsert()
    pytester.makepyfile(answers=EXECUTOR)
    for name in ("concise", "detailed"):
        (pytester.path / "prompts").mkdir(exist_ok=True)
        (pytester.path / "prompts" / f"{name}.md").write_text(name, encoding="utf-8")
    first = [
        sample(f"a{i}", f"task {i}", assertions=checks(i), capability=["math" if i % 2 else "prose"])
        for i in range(5)
    ]
    second = [sample(f"b{i}", f"job {i}", assertions=checks(i + 5), difficulty="hard") for i in range(4)]
    write_sample_set(pytester, *first, name="one/eval-samples.json")
    write_sample_set(pytester, *second, name="two/eval-samples.yaml")
    return pytester


COMMON = (
    "--omk-executor=python:answers:answer",
    "--omk-variant=concise=prompts/concise.md",
    "--omk-variant=detailed=prompts/detailed.md",
    "--omk-repeat=3",
    "--omk-min-pass-rate=0.5",
    "-p",
    "no:cacheprovider",
)


def merge(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return omk_command(cwd, "merge", *args)


def test_three_shards_merged_equal_one_run(
    project: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANSWER_MODE", "good")
    omk_run(*COMMON, "--omk-report=base.json")
    monkeypatch.setenv("ANSWER_MODE", "mixed")
    gate = ("--omk-baseline=base.json", "--omk-fail-on-regression=0.1")
    one = omk_run(*COMMON, *gate, "--omk-report=one.json")
    shards = [
        omk_run(*COMMON, *gate, f"--omk-shard={k}/3", f"--omk-report=shard-{k}.json") for k in (1, 2, 3)
    ]

    # The shards split the 18 items (9 samples x 2 variants) into three disjoint blocks.
    ids = [[s["nodeid"] for s in load_report(project.path / f"shard-{k}.json")["samples"]] for k in (1, 2, 3)]
    assert [len(block) for block in ids] == [6, 6, 6]
    assert [nodeid for block in ids for nodeid in block] == [
        s["nodeid"] for s in load_report(project.path / "one.json")["samples"]
    ]
    assert all("18 items / 12 deselected / 6 selected" in shard.stdout.str() for shard in shards)

    merged = merge(project.path, "shard-3.json", "shard-1.json", "shard-2.json", "-o", "merged.json")
    assert "Traceback" not in merged.stderr
    assert merged.returncode == one.ret == 1  # samples failed and the baseline gate tripped
    one_doc = load_report(project.path / "one.json")
    load_report(project.path / "merged.json")  # valid against the shipped schema too
    assert one_doc["baseline"]["regressions"] and one_doc["comparisons"] and one_doc["variants"]
    assert any(s["repeats"] for s in one_doc["samples"])
    assert normalised(project.path / "merged.json") == normalised(project.path / "one.json")


@pytest.mark.parametrize(
    ("shards", "message"),
    [
        ((1, 2), "shards missing: 3/3 (merge needs all 3 reports)"),
        ((1, 1, 2, 3), "a shard is given twice"),
    ],
)
def test_merge_names_missing_or_repeated_shards(
    project: pytest.Pytester, omk_run: OmkRun, shards: tuple[int, ...], message: str
) -> None:
    for k in sorted(set(shards)):
        omk_run(*COMMON, f"--omk-shard={k}/3", f"--omk-report=shard-{k}.json")
    result = merge(project.path, *(f"shard-{k}.json" for k in shards))
    assert result.returncode == 4
    assert message in result.stderr and "Traceback" not in result.stderr


def test_merge_rejects_a_file_that_is_no_shard_report(project: pytest.Pytester, omk_run: OmkRun) -> None:
    omk_run(*COMMON, "--omk-report=whole.json")
    (project.path / "junk.json").write_text(json.dumps({"hello": 1}), encoding="utf-8")
    whole = merge(project.path, "whole.json")
    assert whole.returncode == 4 and "whole.json is not a shard's report" in whole.stderr
    junk = merge(project.path, "junk.json")
    assert junk.returncode == 4 and "junk.json is not a pytest-omk report" in junk.stderr


@pytest.mark.parametrize("spec", ["0/3", "4/3", "2", "a/b", "1/0"])
def test_a_bad_shard_spec_is_a_usage_error(project: pytest.Pytester, omk_run: OmkRun, spec: str) -> None:
    result = omk_run(*COMMON, f"--omk-shard={spec}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--omk-shard" in result.stderr.str() and "K/N" in result.stderr.str()
