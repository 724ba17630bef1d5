"""A committed recording is as hostile as the model output it holds (issue #43).

Each test records one call with the scripted command executor, tampers with the file the way a
pull request could, and replays. A tampered recording must be an error naming the file (in
replay-only mode; a warning and a live call in local modes), never a hang, a crash, exhausted
memory, a run without its report, a write or a delete outside the recordings tree, or a silent
replay of an answer to another request.

Runs that could hang or eat memory on a broken build go through :func:`guarded_run`: a time limit
that fails the test instead of hanging it, and an address-space limit on the child.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support import (
    QUIET_PLUGINS,
    FakeCommand,
    OmkRun,
    executor_arg,
    load_report,
    report_samples,
    run_pytest,
    write_samples,
)

probe = pytest.mark.probe
SCHEMA = "omk.eval-sample-set/v2"
FAST = (*QUIET_PLUGINS, "--color=no")
APP_ANSWERS = ("--omk-app-record=answers", "--omk-app-digest=version:1")
"""The scripted command is an app under test: its whole answers are recorded only when asked."""
GUARD_SECONDS = 60
GUARD_BYTES = 3 * 1024**3
"""Address space of a guarded run: ample for pytest, far below what reading /dev/zero reaches."""

_GUARDED = (
    "import resource, sys, pytest\n"
    "resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))\n"
    "sys.exit(pytest.main(sys.argv[2:]))\n"
)


def guarded_run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in a child with bounded memory; past :data:`GUARD_SECONDS` the test fails (never hangs)."""
    return pytester.run(sys.executable, "-c", _GUARDED, str(GUARD_BYTES), *FAST, *args, timeout=GUARD_SECONDS)


@pytest.fixture
def recorded(pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand) -> tuple[str, Path]:
    """One sample (a ``cost_max`` check included) recorded once: ``(executor option, its file)``."""
    write_samples(
        pytester,
        "eval-samples.json",
        {
            "schemaVersion": SCHEMA,
            "samples": [
                {
                    "sample_id": "s",
                    "prompt": "p",
                    "assertions": [{"type": "contains", "value": "fine"}, {"type": "cost_max", "value": 0.5}],
                },
            ],
        },
    )
    executor = executor_arg(fake_command.script({"*": {"output": "fine", "costUSD": 0.25}}))
    first = omk_run(
        executor, "--omk-judge=none", "--omk-recordings=recs", *APP_ANSWERS, "--omk-record-mode=new_episodes"
    )
    assert first.ret == 0, first.stdout.str()
    [path] = (pytester.path / "recs" / "execute").rglob("*.json")
    return executor, path


def replay(pytester: pytest.Pytester, executor: str, *, guarded: bool = False) -> pytest.RunResult:
    """A replay-only run; ``guarded`` for a file that could hang or exhaust a broken build."""
    args = (
        executor,
        "--omk-judge=none",
        "--omk-recordings=recs",
        *APP_ANSWERS,
        "--omk-record-mode=none",
        "--omk-report=r.json",
    )
    if guarded:
        return guarded_run(pytester, *args)
    return run_pytest(pytester, "--color=no", *args)


def assert_error_naming(pytester: pytest.Pytester, result: pytest.RunResult, path: Path, reason: str) -> None:
    """The sample errored with one line naming the file and the reason; the report was written."""
    out = result.stdout.str()
    assert "Traceback" not in out and "RecursionError" not in out and "MemoryError" not in out, out
    result.assert_outcomes(errors=1)
    assert path.name in out and reason in out, out
    assert report_samples(load_report(pytester.path / "r.json"))["s"]["outcome"] == "error"


def rewrite(path: Path, change: dict[str, Any]) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    document["result"].update(change)
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")


# --- what the file is -------------------------------------------------------------------------------


@pytest.mark.multiprocess  # guarded_run starts a child pytest
@probe("hostile recording")
def test_a_recording_linked_to_dev_zero_is_refused_without_reading_it(
    pytester: pytest.Pytester, recorded: tuple[str, Path]
) -> None:
    executor, path = recorded
    path.unlink()
    path.symlink_to("/dev/zero")
    assert_error_naming(pytester, replay(pytester, executor, guarded=True), path, "not a regular file")


@pytest.mark.multiprocess  # guarded_run starts a child pytest
@probe("hostile recording")
def test_a_recording_that_is_a_fifo_is_refused_without_blocking(
    pytester: pytest.Pytester, recorded: tuple[str, Path]
) -> None:
    executor, path = recorded
    path.unlink()
    os.mkfifo(path)
    assert_error_naming(pytester, replay(pytester, executor, guarded=True), path, "not a regular file")


@probe("hostile recording")
def test_a_deeply_nested_recording_is_refused(pytester: pytest.Pytester, recorded: tuple[str, Path]) -> None:
    executor, path = recorded
    document = json.loads(path.read_text(encoding="utf-8"))
    depth = 100_000
    text = json.dumps(document).replace(
        '"output": "fine"', '"output": "fine", "deep": ' + "[" * depth + "]" * depth
    )
    path.write_text(text, encoding="utf-8")
    assert_error_naming(pytester, replay(pytester, executor), path, "nests deeper than")


@pytest.mark.multiprocess  # guarded_run starts a child pytest
@probe("hostile recording")
def test_an_oversized_recording_is_refused_before_it_is_read_whole(
    pytester: pytest.Pytester, recorded: tuple[str, Path]
) -> None:
    executor, path = recorded
    with path.open("r+b") as handle:  # a sparse 2 GiB tail: no disk used, but no run may read it all
        handle.truncate(2 * 1024**3)
    assert_error_naming(pytester, replay(pytester, executor, guarded=True), path, "larger than")


# --- the numbers inside -------------------------------------------------------------------------------


@probe("numeric fields")
@pytest.mark.parametrize("cost", ["-1", "NaN", "Infinity", "-Infinity", "1e400"])
def test_an_impossible_cost_in_a_recording_is_an_error_naming_the_file(
    pytester: pytest.Pytester, recorded: tuple[str, Path], cost: str
) -> None:
    executor, path = recorded
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"costUSD": 0.25', f'"costUSD": {cost}'), encoding="utf-8")
    assert f'"costUSD": {cost}' in path.read_text(encoding="utf-8")
    assert_error_naming(pytester, replay(pytester, executor), path, "costUSD")


@probe("numeric fields")
@pytest.mark.parametrize("field", ["inputTokens", "outputTokens", "latencyMs", "numTurns", "retries"])
def test_a_negative_count_in_a_recording_is_an_error_naming_the_file(
    pytester: pytest.Pytester, recorded: tuple[str, Path], field: str
) -> None:
    executor, path = recorded
    rewrite(path, {field: -5})
    assert_error_naming(pytester, replay(pytester, executor), path, field)


@probe("hostile recording")
def test_a_broken_recording_in_a_local_mode_warns_runs_live_and_writes_the_report(
    pytester: pytest.Pytester, omk_run: OmkRun, recorded: tuple[str, Path]
) -> None:
    executor, path = recorded
    rewrite(path, {"costUSD": -1})
    result = omk_run(
        executor,
        "--omk-judge=none",
        "--omk-recordings=recs",
        *APP_ANSWERS,
        "--omk-record-mode=new_episodes",
        "--omk-report=r.json",
    )
    result.assert_outcomes(passed=1)
    assert "ignores recording" in result.stdout.str() and "costUSD" in result.stdout.str()
    sample = report_samples(load_report(pytester.path / "r.json"))["s"]
    assert (sample["execution"]["replayed"], sample["execution"]["costUSD"]) == (False, 0.25)


# --- links in the tree ----------------------------------------------------------------------------


@probe("path escape")
def test_a_symlinked_shard_directory_is_neither_written_nor_swept(
    omk_run: OmkRun, recorded: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    executor, path = recorded
    outside = tmp_path_factory.mktemp("outside")
    stale = outside / ".keep-me.abc.tmp"  # what the stale-temp sweep deletes in a shard it wrote to
    stale.write_text("not ours", encoding="utf-8")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    shard = path.parent
    path.unlink()
    shard.rmdir()
    shard.symlink_to(outside, target_is_directory=True)

    result = omk_run(
        executor, "--omk-judge=none", "--omk-recordings=recs", *APP_ANSWERS, "--omk-record-mode=new_episodes"
    )
    assert stale.exists(), "the sweep deleted a file outside the recordings tree"
    assert sorted(p.name for p in outside.iterdir()) == [stale.name], (
        "a recording was written outside the tree"
    )
    result.assert_outcomes(passed=1)
    assert "leads outside the recordings directory" in result.stdout.str()


@probe("path escape")
def test_a_recording_linked_to_a_file_outside_the_tree_is_not_replayed(
    pytester: pytest.Pytester, recorded: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    executor, path = recorded
    outside = tmp_path_factory.mktemp("outside") / "answer.json"
    path.rename(outside)
    path.symlink_to(outside)
    assert_error_naming(pytester, replay(pytester, executor), path, "not a regular file")


@probe("path escape")
def test_rewrite_never_deletes_through_a_linked_directory(
    omk_run: OmkRun, recorded: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    executor, path = recorded
    outside = tmp_path_factory.mktemp("outside")
    # An older recording of the same sample, in a shard that is a link to a directory elsewhere:
    # rewrite would delete it as unused.
    shard = "ff" if path.parent.name != "ff" else "fe"
    old = json.loads(path.read_text(encoding="utf-8"))
    old["key"] = shard + old["key"][2:]
    victim = outside / f"s-{old['key'][:16]}.json"
    victim.write_text(json.dumps(old), encoding="utf-8")
    stamp = time.time() - 3600
    os.utime(victim, (stamp, stamp))
    (path.parent.parent / shard).symlink_to(outside, target_is_directory=True)
    result = omk_run(
        executor, "--omk-judge=none", "--omk-recordings=recs", *APP_ANSWERS, "--omk-record-mode=rewrite"
    )
    result.assert_outcomes(passed=1)
    assert victim.exists(), "rewrite deleted a file outside the recordings tree"


# --- what the file says ---------------------------------------------------------------------------------


@probe("hostile recording")
def test_a_recording_whose_readable_request_disagrees_with_its_key_is_an_error(
    pytester: pytest.Pytester, recorded: tuple[str, Path]
) -> None:
    executor, path = recorded
    document = json.loads(path.read_text(encoding="utf-8"))
    document["executor"] = "openai"
    document["request"]["model"] = "gpt-5-pro"
    document["request"]["prompt"] = "Is this code safe to merge?"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    assert_error_naming(pytester, replay(pytester, executor), path, "does not match its key")
