"""``--omk-shard-by durations``: a replay run writes each sample's recorded latency in pytest-split's
``.test_durations`` format (``--omk-store-durations``), pytest-split and ``--omk-durations`` both read
it back, and on skewed latencies the heaviest of four shards stays within 1.15x of the ideal where
equal counts are off by more than 2x; the split is stated in the report and merge keeps one run."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_omk.config.shard import weighted_bounds
from tests.support import OmkRun, load_report, omk_command, sample, write_sample_set
from tests.support.wrapped import unwrapped

# The first quarter of the samples answers 50 times slower than the rest (as recorded).
EXECUTOR = """
def answer(request):
    index = int(request.prompt.split()[-1])
    return {"output": "fine", "latencyMs": 50000.0 if index < 10 else 1000.0, "costUSD": 0.001}
"""
SAMPLES = 40
SLOW = 10
N = 4
COMMON = ("--omk-executor=python:answers:answer", "--omk-app-record=answers", "--omk-recordings=rec",
          "-p", "no:cacheprovider")  # fmt: skip


@pytest.fixture
def project(pytester: pytest.Pytester, omk_run: OmkRun) -> pytest.Pytester:
    pytester.syspathinsert()
    pytester.makepyfile(answers=EXECUTOR)
    checks = [{"type": "contains", "value": "fine"}]
    samples = [sample(f"s{i:02d}", f"task {i}", assertions=checks) for i in range(SAMPLES)]
    write_sample_set(pytester, *samples, name="evals/eval-samples.json")
    recorded = omk_run(*COMMON, "--omk-record-mode=new_episodes")
    assert recorded.ret == 0, recorded.stdout.str()
    return pytester


def weights(path: Path) -> dict[str, float]:
    return {k: float(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


@pytest.mark.parametrize(
    "xdist",
    [
        pytest.param((), id="one process"),
        pytest.param(("-n", "2"), id="xdist", marks=pytest.mark.multiprocess),
    ],
)
def test_a_replay_run_writes_the_recorded_latency_in_pytest_splits_format(
    project: pytest.Pytester, omk_run: OmkRun, xdist: tuple[str, ...]
) -> None:
    result = omk_run(
        *COMMON, "--omk-record-mode=none", "--omk-store-durations", *xdist, subprocess=bool(xdist)
    )
    assert result.ret == 0
    path = project.path / ".test_durations"
    text = path.read_text(encoding="utf-8")
    durations = json.loads(text)
    assert list(durations) == sorted(durations) and len(durations) == SAMPLES
    assert durations["evals/eval-samples.json::s00"] == 50.0
    assert durations["evals/eval-samples.json::s39"] == 1.0
    unwrapped(result).fnmatch_lines(
        [f"omk: recorded latency of {SAMPLES} samples written to *.test_durations*"]
    )


@pytest.mark.floor("pytest-split")
@pytest.mark.multiprocess
def test_pytest_split_reads_the_file(project: pytest.Pytester, omk_run: OmkRun) -> None:
    omk_run(*COMMON, "--omk-record-mode=none", "--omk-store-durations")
    # pytest-split itself, in a process of its own: its group 1 of 4 holds the slow samples' share.
    env = {**os.environ, "PYTEST_ADDOPTS": "-p no:randomly"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *COMMON, "--omk-record-mode=none", "--collect-only", "-q",
         "--splits", str(N), "--group", "1", "--durations-path", ".test_durations"],
        cwd=project.path, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    group = [line for line in run.stdout.splitlines() if "::" in line]
    estimated = re.search(r"estimated duration: ([0-9.]+)s", run.stdout)
    assert estimated is not None, run.stdout
    # Equal counts would put 10 slow samples (500 s) in group 1; pytest-split reads the weights.
    assert len(group) < SAMPLES // N and float(estimated.group(1)) <= 150.0


@pytest.mark.multiprocess
def test_durations_balance_where_counts_do_not(project: pytest.Pytester, omk_run: OmkRun) -> None:
    omk_run(*COMMON, "--omk-record-mode=none", "--omk-store-durations=weights.json")
    seconds = weights(project.path / "weights.json")
    ideal = sum(seconds.values()) / N
    load = {}
    for how in ("count", "durations"):
        blocks = []
        for k in range(1, N + 1):
            report = f"{how}-{k}.json"
            result = omk_run(*COMMON, "--omk-record-mode=none", f"--omk-shard={k}/{N}", f"--omk-shard-by={how}",
                             "--omk-durations=weights.json", f"--omk-report={report}")  # fmt: skip
            assert result.ret == 0, result.stdout.str()
            document = load_report(project.path / report)
            blocks.append([s["nodeid"] for s in document["samples"]])
            cut = document["collection"]["shard"]
            assert cut["by"] == how and cut["shard"] == f"{k}/{N}" and document["config"]["shardBy"] == how
        assert sorted(n for block in blocks for n in block) == sorted(seconds)
        load[how] = max(sum(seconds[n] for n in block) for block in blocks) / ideal
    assert load["count"] >= 2.0
    assert load["durations"] <= 1.15
    # Merge rebuilds one run from the durations-cut shards too (contiguous blocks).
    merged = omk_command(
        project.path, "merge", *(f"durations-{k}.json" for k in range(1, N + 1)), "-o", "m.json"
    )
    assert merged.returncode == 0, merged.stderr
    one = omk_run(*COMMON, "--omk-record-mode=none", "--omk-report=one.json")
    assert one.ret == 0
    assert [s["nodeid"] for s in load_report(project.path / "m.json")["samples"]] == [
        s["nodeid"] for s in load_report(project.path / "one.json")["samples"]
    ]


def test_the_split_is_the_same_for_the_same_inputs() -> None:
    skewed = [50.0 if i % 7 == 0 else 1.0 + (i % 3) for i in range(500)]
    assert weighted_bounds(skewed, 4) == weighted_bounds(list(skewed), 4)
    bounds = weighted_bounds(skewed, 4)
    assert bounds[0][0] == 0 and bounds[-1][1] == 500
    assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))


def test_durations_without_a_file_is_a_usage_error(project: pytest.Pytester, omk_run: OmkRun) -> None:
    result = omk_run(*COMMON, "--omk-record-mode=none", "--omk-shard=1/2", "--omk-shard-by=durations")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no durations file at" in result.stderr.str() and "--omk-store-durations" in result.stderr.str()
