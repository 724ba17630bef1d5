"""Interruption leaves nothing behind: Ctrl-C (SIGINT to pytest's process group, as a terminal
sends it) in the middle of a concurrent run stops pytest, with no process of the
run still alive and no partial recording.

Four runs are interrupted: HTTP calls to a slow fake model (8 in flight), a
command executor sleeping in a child process, the agent executor while its Bash tool runs
a long ``sleep``, and a run that started an MCP server to resolve URLs. Every process a run starts
inherits a marker in its environment, so a scan of ``/proc`` finds anything left, whatever its
process group (commands and tools run in sessions of their own, which a terminal's Ctrl-C never
reaches: pytest-omk itself must end them).

No wall-clock budget is asserted (a loaded machine can take any time to start or stop Python).
What proves that pytest stopped the work rather than waited for it is the order of events: every
pending piece of work (a sleep, a model answer) would end on its own no earlier than
``PENDING_SECONDS`` after the pytest process started, and pytest must have exited, with none of
it still running, before that moment.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.reliability.helpers import (
    MARK_VAR,
    PytestProcess,
    audit_recordings,
    marked_processes,
    pid_alive,
    pytest_process,
    require_proc,
    wait_until,
)
from tests.support import OmkRun, sample, write_sample_set

SCHEMA = "omk.eval-sample-set/v2"
MCP_DOCS_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_docs_server.py"
KEY = "sk-interrupt-key-000111222"
PENDING_SECONDS = 120.0
"""How long each interrupted piece of work would run if nobody stopped it (sleeps, slow answers)."""
SLEEP = f"sleep {PENDING_SECONDS:g}"


@pytest.fixture(autouse=True)
def _linux_only() -> None:
    require_proc()


def samples(count: int, **extra: Any) -> dict[str, Any]:
    return {
        "schemaVersion": SCHEMA,
        "samples": [
            {"sample_id": f"s{i:02d}", "prompt": f"Question {i:02d}: say something.", **extra}
            for i in range(count)
        ],
    }


def pids_in(path: Path) -> set[int]:
    """Process ids written one per line (by our commands and tools)."""
    if not path.exists():
        return set()
    return {int(line) for line in path.read_text(encoding="utf-8").split() if line.strip().isdigit()}


@pytest.fixture
def env(fake_llm: FakeLLM) -> dict[str, str]:
    return {"OPENAI_BASE_URL": fake_llm.openai_base_url, "OPENAI_API_KEY": KEY}


def interrupt(run: PytestProcess) -> float:
    """Ctrl-C: SIGINT to pytest's process group; returns ``time.monotonic()`` once pytest exited."""
    os.killpg(run.pid, signal.SIGINT)
    try:
        run.wait(max(run.started + PENDING_SECONDS - time.monotonic(), 1.0))
    except Exception:
        pytest.fail(f"pytest did not stop after SIGINT before its work would have ended: {run.output()}")
    return time.monotonic()


def assert_clean_stop(run: PytestProcess, exited: float, recordings: Path) -> str:
    """The run stopped as an interruption, before any pending work would have ended by itself,
    and left no process and no partial file."""
    out, err = run.output()
    # pytest reports the interruption (exit code 2). About one run in 25, after printing that same
    # report, CPython ends the process through its own "unhandled KeyboardInterrupt" path, a
    # kill(self, SIGINT) seen with strace, so the code is -SIGINT; both are a clean Ctrl-C to a
    # shell. The cause is still open (docs/reliability.md); what is asserted below holds for both.
    assert run.proc.returncode in (pytest.ExitCode.INTERRUPTED, -signal.SIGINT), (
        run.proc.returncode,
        out,
        err,
    )
    assert "KeyboardInterrupt" in out + err
    assert exited < run.started + PENDING_SECONDS, "pytest waited for the interrupted work to end"
    # Whatever was still running went with it. Under xdist the controller may exit while its workers
    # are still ending their commands' sessions, which on a loaded machine takes seconds; the proof
    # is again the order of events: every leftover would live until PENDING_SECONDS after the start
    # if nobody ended it, so all of them must be gone before that moment.
    remaining = max(run.started + PENDING_SECONDS - time.monotonic(), 0.0)
    assert wait_until(lambda: not marked_processes(run.mark), timeout=remaining), marked_processes(run.mark)
    audit = audit_recordings(recordings)
    assert not audit.problems, audit.problems
    assert not audit.temps, audit.temps
    return out


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "run"
    directory.mkdir()
    return directory


# --- HTTP calls to a slow model -------------------------------------------------------------------


@pytest.mark.multiprocess
def test_ctrl_c_during_slow_http_calls(run_dir: Path, fake_llm: FakeLLM, env: dict[str, str]) -> None:
    fake_llm.script(default="ok")
    for i in range(24):
        # Two quick answers get recorded; every other one would take PENDING_SECONDS.
        fake_llm.add_rule(f"Question {i:02d}:", f"answer {i}", latency=0.2 if i < 2 else PENDING_SECONDS)
    write_samples_file(run_dir, samples(24))
    args = [
        "--omk-executor=openai",
        "--omk-judge=none",
        "--omk-concurrency=8",
        "--omk-timeout=600",
        "--omk-recordings=recs",
        "--omk-record-mode=new_episodes",
        "-p",
        "no:cacheprovider",
    ]
    with pytest_process(args, cwd=run_dir, env=env, logs=run_dir / "logs") as run:
        # Interrupt once the quick answers are recorded and eight slow calls are in flight.
        assert wait_until(lambda: len(list((run_dir / "recs").rglob("*.json"))) >= 2, timeout=60), (
            run.output()
        )
        assert wait_until(lambda: len(fake_llm.requests) >= 10, timeout=60)
        exited = interrupt(run)
        out = assert_clean_stop(run, exited, run_dir / "recs")
    # Nothing waited for the eight slow answers, and the summary says they were sent (a call cut
    # off is paid for all the same: docs/reporting.md, "Every call is counted").
    assert "omk: 8 calls cut off in flight by the stop" in out, out
    # The slots their cancellations freed sent nothing more: two quick answers, eight cut off.
    assert len(fake_llm.requests) == 10
    audit = audit_recordings(run_dir / "recs")
    assert len(audit.documents) == 2
    for document in audit.documents:
        assert document.result["output"] == f"answer {int(document.label[1:])}"


def write_samples_file(directory: Path, document: dict[str, Any]) -> Path:
    path = directory / "eval-samples.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def sleep_and_note_pids(pids: Path) -> str:
    """Shell code that starts a long sleep as a child, appends both pids to ``pids`` and waits."""
    return f"{SLEEP} & echo $! >> {shlex.quote(str(pids))}; echo $$ >> {shlex.quote(str(pids))}; wait"


def interrupt_once_started(
    args: list[str],
    run_dir: Path,
    env: dict[str, str],
    pids: Path,
    expected: int,
    *,
    check_alive: bool = False,
) -> None:
    """Run pytest, Ctrl-C it once ``expected`` pids are noted (``check_alive``: all still running),
    and check that it stopped cleanly, left none of them alive and recorded nothing."""
    with pytest_process(args, cwd=run_dir, env=env, logs=run_dir / "logs") as run:
        assert wait_until(lambda: len(pids_in(pids)) >= expected, timeout=60), run.output()
        started = pids_in(pids)
        if check_alive:
            assert all(pid_alive(pid) for pid in started)
        exited = interrupt(run)
        assert_clean_stop(run, exited, run_dir / "recs")
    assert not [pid for pid in started if pid_alive(pid)]
    assert audit_recordings(run_dir / "recs").documents == []


# --- a command executor that sleeps in a child process --------------------------------------------


@pytest.mark.multiprocess
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_ctrl_c_during_sleeping_commands(run_dir: Path, env: dict[str, str], workers: list[str]) -> None:
    pids = run_dir / "pids.txt"
    script = sleep_and_note_pids(pids)
    write_samples_file(run_dir, samples(6))
    args = [
        f"--omk-executor=command:sh -c {shlex.quote(script)}",
        "--omk-judge=none",
        "--omk-concurrency=8",
        "--omk-timeout=600",
        "--omk-recordings=recs",
        "--omk-record-mode=new_episodes",
        "-p",
        "no:cacheprovider",
        *workers,
    ]
    # Under xdist each worker runs its own items' commands, one at a time.
    expected = 12 if not workers else 4
    interrupt_once_started(args, run_dir, env, pids, expected, check_alive=True)


# --- the agent's Bash tool running a long sleep ---------------------------------------------------


@pytest.mark.multiprocess
def test_ctrl_c_during_an_agent_bash_tool(run_dir: Path, fake_llm: FakeLLM, env: dict[str, str]) -> None:
    # Bash may run sandboxed (no writes outside its copy, pids of its own namespace), so its sleeps
    # are found by the marker every process of the run inherits, under their host pids.
    command = f"{SLEEP} & setsid {SLEEP} & wait"
    fake_llm.script(default="done")
    # Every sample's first turn runs the command (the interrupt comes long before it ends).
    fake_llm.add_rule(
        prompt="Question", reply={"tool_calls": [{"name": "Bash", "arguments": {"command": command}}]}
    )
    write_samples_file(run_dir, samples(3))
    args = [
        "--omk-executor=agent",
        "--omk-judge=none",
        "--omk-agent-tool-timeout=600",
        # Bash's environment is an allow-list: the marker that finds its processes is let through.
        f"--omk-agent-env={MARK_VAR}",
        "--omk-timeout=600",
        "--omk-recordings=recs",
        "--omk-record-mode=new_episodes",
        "-p",
        "no:cacheprovider",
    ]
    with pytest_process(args, cwd=run_dir, env=env, logs=run_dir / "logs") as run:

        def sleeps() -> list[int]:
            return [pid for pid, line in marked_processes(run.mark).items() if line == SLEEP]

        # The agent runs its samples' tools one sample at a time per worker: at least one Bash
        # (two sleeps, one of them in a session of its own) is running.
        assert wait_until(lambda: len(sleeps()) >= 2, timeout=60), run.output()
        started = sleeps()
        exited = interrupt(run)
        assert_clean_stop(run, exited, run_dir / "recs")
    assert not [pid for pid in started if pid_alive(pid)]
    assert audit_recordings(run_dir / "recs").documents == []


# --- an MCP server started for URL resolution ------------------------------------------------------


@pytest.mark.multiprocess
def test_ctrl_c_after_an_mcp_server_started(run_dir: Path, fake_llm: FakeLLM, env: dict[str, str]) -> None:
    pidfile = run_dir / "mcp.pid"
    server = {
        "command": sys.executable,
        "args": [str(MCP_DOCS_SERVER)],
        "env": {"DOCS_API_TOKEN": "tok-interrupt-0a1b2c3d", "MCP_DOCS_PIDFILE": str(pidfile)},
        "urlPatterns": ["docs.corp.dev"],
        "fetchTool": {
            "name": "fetch_doc",
            "urlTransform": {
                "regex": r"docs\.corp\.dev/([^/]+)/([^/?#]+)",
                "params": {"namespace": "$1", "slug": "$2"},
            },
            "contentExtract": "data.body",
        },
    }
    (run_dir / ".mcp.json").write_text(json.dumps({"mcpServers": {"docs": server}}), encoding="utf-8")
    fake_llm.script(default="ok", latency=PENDING_SECONDS)
    document = samples(4)
    for i, entry in enumerate(document["samples"]):
        entry["prompt"] += f" See https://docs.corp.dev/team/page-{i}"
    write_samples_file(run_dir, document)
    args = [
        "--omk-executor=openai",
        "--omk-judge=none",
        "--omk-concurrency=8",
        "--omk-timeout=600",
        "--omk-recordings=recs",
        "--omk-record-mode=new_episodes",
        "-p",
        "no:cacheprovider",
    ]
    with pytest_process(args, cwd=run_dir, env=env, logs=run_dir / "logs") as run:
        # The pages were fetched through the server and the model calls are in flight.
        assert wait_until(lambda: len(fake_llm.requests) >= 4, timeout=60), run.output()
        server_pid = int(pidfile.read_text(encoding="utf-8"))
        assert pid_alive(server_pid)
        # The server runs in a process group of its own, which Ctrl-C does not reach: pytest-omk
        # must stop it.
        assert os.getpgid(server_pid) != run.pid
        exited = interrupt(run)
        assert_clean_stop(run, exited, run_dir / "recs")
    assert not pid_alive(server_pid)
    audit = audit_recordings(run_dir / "recs")
    assert len([d for d in audit.documents if d.kind == "fetch"]) == 4  # the four pages, whole
    assert audit.labels("execute") == []


# --- the partial summary says how many samples did not run ---------------------------------------

INTERRUPT_AT_S3 = """
def pytest_runtest_setup(item):
    if item.nodeid.endswith("::s3"):
        raise KeyboardInterrupt
"""


def test_ctrl_c_says_how_many_samples_were_not_run(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.makeconftest(INTERRUPT_AT_S3)
    check = [{"type": "contains", "value": "s"}]
    write_sample_set(pytester, *(sample(f"s{n}", f"prompt {n}", assertions=check) for n in range(6)))
    # In process: the KeyboardInterrupt is raised by the conftest, not a signal, and keep_ctrl_c
    # stops pytester from raising it again into this session once the run has ended.
    result = omk_run("--omk-executor", "echo", keep_ctrl_c=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["omk: interrupted: 3 of 6 samples not run"])
