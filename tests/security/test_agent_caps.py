"""The agent's caps hold end to end: processes of Bash, tool calls per turn, working-copy size (issue #15).

Each test fails when its cap is taken out (checked by disabling it once by hand): the fork bomb
spawns every child it asks for, all tool calls of the turn run, the oversized copy is made.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.agent import isolation
from pytest_omk.agent.loop import MAX_TOOL_CALLS_PER_TURN, TOO_MANY_CALLS
from pytest_omk.agent.sandbox import ROOT_NOTICE, UNSANDBOXED_NOTICE, Sandbox
from pytest_omk.agent.tools import BuiltinTools
from tests.fakes.fake_llm import FakeLLM
from tests.reliability.helpers import all_pids, processes_running, require_proc
from tests.support import run_pytest, write_samples

probe = pytest.mark.probe
SCHEMA = "omk.eval-sample-set/v2"
BOMB_SLEEP = "5151.25"
"""The fork bomb's children are ``sleep 5151.25``: a marker in argv nobody else uses."""
WANTED = 200
"""How many children the bounded fork bomb asks for."""


def _processes_of(uid: int) -> int:
    count = 0
    for pid in all_pids():
        try:
            count += os.stat(f"/proc/{pid}").st_uid == uid
        except OSError:
            continue
    return count


@probe("sandbox")
def test_a_fork_bomb_in_bash_is_held_by_the_process_limit_and_leaves_nothing(tmp_path: Path) -> None:
    require_proc()
    detected = Sandbox.detect()
    if not detected.limits_processes:
        pytest.skip("as root without bubblewrap and setpriv the kernel exempts uid 0 from the process limit")
    uid = detected.uid if detected.uid is not None else os.getuid()
    # The limit counts every process of that user, so leave room for those already running.
    cap = _processes_of(uid) + 40
    sandbox = dataclasses.replace(
        detected, limits=tuple((f, cap if f == "-u" else v) for f, v in detected.limits)
    )
    work = tmp_path / "work"
    work.mkdir()
    tools = BuiltinTools(work, timeout=5, environ=dict(os.environ), sandbox=sandbox)
    # Each child notes itself before it becomes a long sleep; a refused fork notes nothing (bash
    # then retries for seconds and gives up, or the tool timeout ends it).
    bomb = f"for i in $(seq {WANTED}); do (echo x >> spawned; exec sleep {BOMB_SLEEP}) & done; wait"
    result = asyncio.run(tools.run("Bash", {"command": bomb}))
    spawned = len((work / "spawned").read_text().split()) if (work / "spawned").exists() else 0
    assert not result.success
    assert 1 <= spawned <= cap < WANTED, (spawned, cap, result.output[-500:])
    assert processes_running(f"sleep {BOMB_SLEEP}") == []


# --- through the agent executor ------------------------------------------------------------------


@pytest.fixture
def agent(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-agent-key-0002")
    fake_llm.script(default="Done.")
    return fake_llm


def run_agent(pytester: pytest.Pytester, sample: dict[str, Any]) -> dict[str, Any]:
    write_samples(pytester, "eval-samples.json", {"schemaVersion": SCHEMA, "samples": [sample]})
    run_pytest(
        pytester,
        "--omk-executor=agent",
        "--omk-judge=none",
        "--omk-record-mode=off",
        "--omk-report=r.json",
        "-p",
        "no:xdist",
    )
    document = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    found: dict[str, Any] = {s["sample_id"]: s for s in document["samples"]}[sample["sample_id"]]
    return found


@probe("size cap")
def test_one_turn_runs_at_most_the_tool_call_cap(pytester: pytest.Pytester, agent: FakeLLM) -> None:
    asked = MAX_TOOL_CALLS_PER_TURN + 20
    writes = [
        {"name": "Write", "arguments": {"file_path": f"f{i:03}.txt", "content": "x"}} for i in range(asked)
    ]
    count = {"tool_calls": [{"name": "Bash", "arguments": {"command": "ls f*.txt | wc -l"}}]}
    agent.add_rule(prompt="Write many files", replies=[{"tool_calls": writes}, count, "Done."])
    record = run_agent(pytester, {"sample_id": "flood", "prompt": "Write many files.", "cwd": "."})
    calls = record["execution"]["toolCalls"]
    assert len(calls) == asked + 1
    refused = [c for c in calls[:asked] if c["output"] == TOO_MANY_CALLS]
    assert len(refused) == asked - MAX_TOOL_CALLS_PER_TURN
    assert all(c["status"] == "cancelled" and not c["success"] for c in refused)
    # What really ran, seen from inside the working copy: the files the first calls wrote, no more.
    assert calls[-1]["output"].strip() == str(MAX_TOOL_CALLS_PER_TURN)


@probe("size cap")
@pytest.mark.parametrize("what", ["bytes", "entries"])
def test_a_working_directory_over_the_copy_cap_is_an_execution_error(
    pytester: pytest.Pytester, agent: FakeLLM, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    # Lowered caps, so that the test needs kilobytes, not the default 256 MiB and 50,000 entries.
    monkeypatch.setattr(isolation, "MAX_COPY_BYTES", 64 * 1024)
    monkeypatch.setattr(isolation, "MAX_COPY_ENTRIES", 100)
    ws = pytester.path / "ws"
    ws.mkdir()
    if what == "bytes":
        (ws / "big.bin").write_bytes(b"\0" * (64 * 1024 + 1))
    else:
        for i in range(101):
            (ws / f"f{i}").write_text("x", encoding="utf-8")
    agent.add_rule(
        prompt="Look around",
        replies=[{"tool_calls": [{"name": "Bash", "arguments": {"command": "ls"}}]}, "Done."],
    )
    record = run_agent(pytester, {"sample_id": "huge", "prompt": "Look around.", "cwd": "ws"})
    assert record["outcome"] == "error"
    assert "larger than the copy limit (65536 bytes, 100 entries)" in record["error"]
    assert agent.requests == []  # the model was never asked: the run stopped at the copy
    leftovers = [
        p for p in Path(tempfile.gettempdir()).glob("omk-agent-*") if (p / "work" / "big.bin").exists()
    ]
    assert leftovers == []


@probe("sandbox")
def test_the_run_names_each_gap_of_the_sandbox() -> None:
    notice = Sandbox(None).notice
    assert notice is not None and notice.startswith(UNSANDBOXED_NOTICE)
    dropped = Sandbox("/usr/bin/bwrap", "/usr/bin/setpriv", 65534)
    assert dropped.notice is None
    if os.geteuid() == 0:
        # As root without the drop, the process limit does not bind, and the run says so.
        assert Sandbox("/usr/bin/bwrap").notice == ROOT_NOTICE


@probe("sandbox")
def test_handing_the_working_copy_over_never_reaches_outside_it(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the working copy is handed to another user only when pytest runs as root")
    outside = tmp_path / "outside.txt"
    outside.write_text("root's", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    (work / "mine.txt").write_text("x", encoding="utf-8")
    (work / "soft").symlink_to(outside)
    os.link(outside, work / "hard")
    Sandbox("/usr/bin/bwrap", "/usr/bin/setpriv", 65534).prepare(work)
    assert (work / "mine.txt").stat().st_uid == 65534
    assert outside.stat().st_uid == 0
