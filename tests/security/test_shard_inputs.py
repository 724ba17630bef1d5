"""Hostile inputs of sharding: the ``--omk-durations`` file a run reads, and the recordings
directories ``python -m pytest_omk merge --recordings`` combines (artifacts another CI job uploaded).
Each is refused with one line naming the file and exit 4: no traceback, nothing read through a link,
nothing written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support import OmkRun, omk_command, omk_main, sample, write_sample_set
from tests.support.wrapped import unwrapped

probe = pytest.mark.probe
EXECUTOR = """
def answer(request):
    return {"output": "fine " + request.prompt, "costUSD": 0.001, "latencyMs": 1500.0}
"""
COMMON = ("--omk-executor=python:answers:answer", "--omk-app-record=answers", "-p", "no:cacheprovider")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.syspathinsert()
    pytester.makepyfile(answers=EXECUTOR)
    checks = [{"type": "contains", "value": "fine"}]
    write_sample_set(pytester, *[sample(f"s{i}", f"task {i}", assertions=checks) for i in range(6)])
    return pytester


def durations_run(omk_run: OmkRun) -> pytest.RunResult:
    return omk_run(*COMMON, "--omk-shard=1/2", "--omk-shard-by=durations", "--omk-durations=d.json")


@probe("hostile durations file")
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "must be a JSON object of node id to seconds"),
        ('{"eval-samples.json::s0": "slow"}', "must be seconds (a number from 0 to 604800)"),
        ('{"eval-samples.json::s0": -1}', "must be seconds"),
        ('{"eval-samples.json::s0": 1e999}', "must be seconds"),
        ('{"eval-samples.json::s0": NaN}', "not JSON"),
        ('{"eval-samples.json::s0": true}', "must be seconds"),
        ("{" * 100000, "not JSON"),
        ("\xff\xfe", "not JSON"),
    ],
)
def test_a_malformed_durations_file_is_one_clear_error(
    project: pytest.Pytester, omk_run: OmkRun, content: str, message: str
) -> None:
    (project.path / "d.json").write_bytes(content.encode("utf-8", "surrogateescape") if content != "\xff\xfe"
                                          else b"\xff\xfe")  # fmt: skip
    result = durations_run(omk_run)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--omk-durations" in err and "d.json" in err and message in err and "Traceback" not in err


@probe("hostile durations file")
@pytest.mark.parametrize("attack", ["link", "fifo", "huge", "directory"])
def test_a_durations_file_that_is_no_regular_file_is_refused(
    project: pytest.Pytester, omk_run: OmkRun, tmp_path: Path, attack: str
) -> None:
    path = project.path / "d.json"
    if attack == "link":
        secret = tmp_path / "secret.json"
        secret.write_text('{"eval-samples.json::s0": 1}', encoding="utf-8")
        path.symlink_to(secret)
    elif attack == "fifo":
        os.mkfifo(path)  # open() would wait for a writer for ever
    elif attack == "huge":
        with path.open("wb") as handle:
            handle.truncate(33 * 1024 * 1024)  # sparse: larger than the cap, nothing to read
    else:
        path.mkdir()
    result = durations_run(omk_run)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--omk-durations" in err and "Traceback" not in err
    assert "is not a regular file" in err or "is larger than" in err or "cannot read it" in err


@probe("hostile durations file")
def test_unknown_node_ids_and_many_entries_only_weigh_what_is_collected(
    project: pytest.Pytester, omk_run: OmkRun
) -> None:
    # Entries for items this run does not have change nothing; the run's own take the file's value.
    planted: dict[str, float] = {f"elsewhere.json::x{i}": 604800 for i in range(20000)}
    planted["eval-samples.json::s0"] = 10.0
    (project.path / "d.json").write_text(json.dumps(planted), encoding="utf-8")
    result = durations_run(omk_run)
    assert result.ret == 0, result.stdout.str()
    unwrapped(result).fnmatch_lines(["omk: shard 1/2: * items by durations, *1 items weighed*"])


@pytest.fixture
def recorded(project: pytest.Pytester, omk_run: OmkRun) -> Path:
    for k in (1, 2):
        result = omk_run(
            *COMMON, "--omk-record-mode=new_episodes", f"--omk-recordings=rec-{k}", f"--omk-shard={k}/2"
        )
        assert result.ret == 0
    return project.path


def _one_recording(directory: Path) -> Path:
    return sorted(directory.rglob("*.json"))[0]


@probe("hostile recording")
@pytest.mark.parametrize("attack", ["link-out", "fifo", "not-a-recording", "misplaced", "dir-link", "a-file"])
def test_hostile_recordings_inputs_are_refused(recorded: Path, tmp_path: Path, attack: str) -> None:
    victim = tmp_path / "secret.json"
    victim.write_text('{"token": "do-not-copy"}', encoding="utf-8")
    target = recorded / "rec-2"
    some = _one_recording(target)
    if attack == "link-out":
        (some.parent / f"stolen-{'a' * 16}.json").symlink_to(victim)
    elif attack == "fifo":
        os.mkfifo(some.parent / f"blocker-{'b' * 16}.json")
    elif attack == "not-a-recording":
        some.write_text('{"hello": 1}', encoding="utf-8")
    elif attack == "misplaced":
        some.rename(some.parent / f"moved-{'c' * 16}.json")
    elif attack == "dir-link":
        (recorded / "rec-link").symlink_to(tmp_path, target_is_directory=True)
        target = recorded / "rec-link"
    else:
        target = victim
    # In process but for the FIFO, whose child is bounded by a timeout should the merge block on it.
    merge = omk_command if attack == "fifo" else omk_main
    result = merge(recorded, "merge", "--recordings", "rec-1", str(target), "--recordings-out", "out")
    assert result.returncode == 4, result.stderr
    assert "Traceback" not in result.stderr and target.name in result.stderr
    assert not (recorded / "out").exists()
    assert "do-not-copy" not in result.stderr
