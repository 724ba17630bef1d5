"""Four recording shards against the loopback fake server: one budget across them (each shard its
weighted part, so together they spend at most the one cap), ``merge`` summing the spend and naming
each shard that stopped, and ``merge --recordings`` making one tree that replays the whole suite
with no miss and refusing two different answers under one key (hostile inputs:
tests/security/test_shard_inputs.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, omk_command
from tests.support.executors import priced_samples

SAMPLES = 16
PRICE = 0.01
N = 4


@pytest.fixture
def priced(pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    check = {"type": "contains", "value": "hello"}
    return priced_samples(pytester, monkeypatch, fake_llm, count=SAMPLES, price=PRICE, check=check)


def shard(omk_run: OmkRun, k: int, *args: str) -> pytest.RunResult:
    return omk_run("--omk-record-mode=new_episodes", f"--omk-recordings=rec-{k}", f"--omk-shard={k}/{N}",
                   f"--omk-report=shard-{k}.json", "--omk-concurrency=1", *args)  # fmt: skip


@pytest.mark.multiprocess
@pytest.mark.parametrize("allow", [False, True])
def test_four_shards_spend_one_budget_and_merge_names_who_stopped(
    priced: FakeLLM, omk_run: OmkRun, pytester: pytest.Pytester, allow: bool
) -> None:
    cap = 0.08  # alone, each shard would spend 0.04 (its four samples): 0.16 in all
    extra = ("--omk-allow-incomplete",) if allow else ()
    for k in range(1, N + 1):
        result = shard(omk_run, k, f"--omk-budget-usd={cap}", *extra)
        result.stdout.fnmatch_lines([f"omk: budget of shard {k}/{N}: $0.02 of $0.08 (25.0% of the weight)"])
        assert result.ret == (0 if allow else 1)
        document = load_report(pytester.path / f"shard-{k}.json")
        assert document["collection"]["shard"]["budgetUSD"] == pytest.approx(0.02)
    # Counted where the calls arrive: the whole matrix stayed within the one cap.
    assert len(priced.requests) * PRICE <= cap + 1e-9 and len(priced.requests) == 8
    merged = omk_command(
        pytester.path, "merge", *(f"shard-{k}.json" for k in range(1, N + 1)), "-o", "m.json"
    )
    assert merged.returncode == (0 if allow else 1), merged.stderr
    for k in range(1, N + 1):
        assert f"shard {k}/{N} (2 samples not run) stopped on its part of the budget" in merged.stderr
    assert "budget: $0.08 of $0.08 spent (model $0.08 on 8 calls)" in merged.stderr
    summary = load_report(pytester.path / "m.json")["summary"]
    budget, spent = summary["budget"], summary["usage"]["model"]["spent"]
    assert budget["spentUSD"] == pytest.approx(0.08) and budget["limitUSD"] == cap
    assert budget["notRun"] == 8 and spent["pricedCalls"] == 8  # the spend by role: the usage block


@pytest.mark.multiprocess
def test_merged_recordings_replay_the_whole_suite_with_no_miss(
    priced: FakeLLM, omk_run: OmkRun, pytester: pytest.Pytester
) -> None:
    for k in range(1, N + 1):
        assert shard(omk_run, k).ret == 0
    recorded = len(priced.requests)
    assert recorded == SAMPLES
    shutil.copytree(pytester.path / "rec-1", pytester.path / "rec-1-again")  # the same answers twice
    dirs = [f"rec-{k}" for k in range(1, N + 1)]
    merged = omk_command(
        pytester.path, "merge", "--recordings", *dirs, "rec-1-again", "--recordings-out", "all"
    )
    assert merged.returncode == 0, merged.stderr
    assert f"{SAMPLES} recordings from 5 directories written to all" in merged.stderr
    assert "(4 recorded twice with the same answer, kept once)" in merged.stderr
    replay = omk_run("--omk-record-mode=none", "--omk-recordings=all", "--omk-report=replay.json")
    assert replay.ret == 0, replay.stdout.str()
    assert len(priced.requests) == recorded  # nothing asked the server: every call replayed
    document = load_report(pytester.path / "replay.json")
    assert document["summary"]["outcomes"] == {"passed": SAMPLES}
    assert document["summary"]["modelCalls"] == {"live": 0, "replayed": SAMPLES}


def _one_recording(directory: Path) -> Path:
    return next(p for p in sorted(directory.rglob("*.json")))


@pytest.fixture
def recorded(priced: FakeLLM, omk_run: OmkRun, pytester: pytest.Pytester) -> Path:
    for k in (1, 2):
        assert shard(omk_run, k).ret == 0
    return pytester.path


def merge_recordings(cwd: Path, *dirs: str) -> subprocess.CompletedProcess[str]:
    return omk_command(cwd, "merge", "--recordings", *dirs, "--recordings-out", "out")


@pytest.mark.multiprocess
def test_two_answers_under_one_key_are_refused(recorded: Path) -> None:
    original = _one_recording(recorded / "rec-1")
    planted = recorded / "rec-2" / original.relative_to(recorded / "rec-1")
    planted.parent.mkdir(parents=True, exist_ok=True)
    document = json.loads(original.read_text(encoding="utf-8"))
    document["result"]["output"] = "a different answer"
    planted.write_text(json.dumps(document), encoding="utf-8")
    result = merge_recordings(recorded, "rec-1", "rec-2")
    assert result.returncode == 4 and "Traceback" not in result.stderr
    assert "two different answers under one key" in result.stderr
    assert str(original.relative_to(recorded)) in result.stderr
    assert str(planted.relative_to(recorded)) in result.stderr
    assert not (recorded / "out").exists()  # nothing written


@pytest.mark.multiprocess
def test_recordings_and_recordings_out_go_together(tmp_path: Path) -> None:
    result = omk_command(tmp_path, "merge", "--recordings", "a")
    assert result.returncode == 4 and "--recordings and --recordings-out go together" in result.stderr
    nothing = omk_command(tmp_path, "merge")
    assert nothing.returncode == 4 and "nothing to merge" in nothing.stderr
