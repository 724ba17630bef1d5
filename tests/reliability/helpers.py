"""Shared helpers of the reliability suite.

- :func:`wait_until` polls a condition (a time limit for loader inputs is in ``tests/loader_inputs.py``).
- :func:`audit_recordings` checks a recordings directory file by file.
- :func:`marked_processes` finds every live process that descends from a run we started (they
  all inherit one environment marker), so a test can prove nothing was left running;
  :func:`processes_running` finds processes by their exact command line (a marker in argv, such
  as an unusual ``sleep`` length), for processes whose environment we do not control.
- :func:`pytest_process` runs pytest as a child in its own session and always cleans it up,
  together with anything it spawned, even when the test fails.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_omk.recordings.files import (
    Document,
    RecordingFileError,
    name_hash,
    read_document,
)
from pytest_omk.recordings.tree import TEMP_SUFFIX
from tests.support.runner import QUIET_PLUGINS

REPO = Path(__file__).resolve().parents[2]
MARK_VAR = "OMK_RELIABILITY_MARK"
"""Every process a test starts carries ``OMK_RELIABILITY_MARK=<unique value>`` in its environment;
children inherit it (MCP servers keep non-secret variables; the agent's Bash gets it only through --omk-agent-env)."""

# --- waiting --------------------------------------------------------------------------------------


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` seconds pass; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


# --- recordings -----------------------------------------------------------------------------------


@dataclass
class RecordingsAudit:
    """What a recordings directory holds."""

    documents: list[Document] = field(default_factory=list)
    """Every complete, valid recording."""
    temps: list[Path] = field(default_factory=list)
    """Temporary files of writers (``.<name>.<random>.tmp``), which readers never read."""
    problems: list[str] = field(default_factory=list)
    """Anything else: unparseable or misplaced files, keys that do not match their names."""

    def labels(self, kind: str) -> list[str]:
        return sorted(d.label for d in self.documents if d.kind == kind)


def is_temp_file(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(TEMP_SUFFIX)


def audit_recordings(directory: Path) -> RecordingsAudit:
    """Read every file under ``directory`` as a recording (``<kind>/<2 hex>/<slug>-<16 hex>.json``)."""
    audit = RecordingsAudit()
    if not directory.exists():
        return audit
    for path in sorted(p for p in directory.rglob("*") if p.is_file() or p.is_symlink()):
        relative = path.relative_to(directory)
        if is_temp_file(path):
            audit.temps.append(path)
            continue
        hashed = name_hash(path.name)
        if hashed is None or len(relative.parts) != 3:
            audit.problems.append(f"{relative}: not a recording file name or place")
            continue
        try:
            document = read_document(path)
        except (OSError, RecordingFileError) as exc:
            audit.problems.append(f"{relative}: {exc}")
            continue
        kind, shard, _ = relative.parts
        if document.kind != kind or document.key[:2] != shard or document.key[:16] != hashed:
            audit.problems.append(
                f"{relative}: kind/key {document.kind}/{document.key} do not match its path"
            )
            continue
        audit.documents.append(document)
    return audit


# --- processes ------------------------------------------------------------------------------------


def require_proc() -> None:
    """Process checks read ``/proc``; skip where there is none."""
    if not Path("/proc/self/environ").exists():
        pytest.skip("needs /proc (Linux) to inspect processes")


def new_mark() -> str:
    return uuid.uuid4().hex


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # "pid (comm) S ...": comm may hold spaces and parentheses, the state follows the last ")".
    return stat.rpartition(")")[2].split()[0]


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (a zombie runs nothing and holds nothing)."""
    state = _state(pid)
    return state is not None and state not in ("Z", "X")


def marked_processes(mark: str) -> dict[int, str]:
    """Live processes whose environment holds ``MARK_VAR=mark``: pid -> command line."""
    needle = f"{MARK_VAR}={mark}".encode()
    found: dict[int, str] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and pid_alive(pid):
            found[pid] = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


def all_pids() -> list[int]:
    """Every process id in ``/proc`` (live or zombie)."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def cmdline(pid: int) -> str:
    """``pid``'s command line, arguments joined by spaces (``""`` when it is gone or unreadable)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def processes_running(command: str) -> list[int]:
    """Live (non-zombie) processes whose command line is exactly ``command``."""
    return [pid for pid in all_pids() if cmdline(pid) == command and pid_alive(pid)]


def kill_marked(mark: str) -> None:
    """SIGKILL every process of ours that is still running (cleanup: never fails)."""
    for pid in marked_processes(mark):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def child_env(extra: Mapping[str, str] | None = None, *, mark: str) -> dict[str, str]:
    """The environment of a nested pytest: ours without pytest's own variables, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT_TEST")) and k != "PYTEST_ADDOPTS"
    }
    env.update(extra or {})
    env[MARK_VAR] = mark
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


@dataclass
class PytestProcess:
    """A pytest child process; its output goes to files (a full pipe would block it)."""

    proc: subprocess.Popen[bytes]
    stdout_path: Path
    stderr_path: Path
    mark: str
    started: float = field(default_factory=time.monotonic)
    """``time.monotonic()`` just after the process was started: nothing it runs began earlier."""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output(self) -> tuple[str, str]:
        return (
            self.stdout_path.read_text(encoding="utf-8", errors="replace"),
            self.stderr_path.read_text(encoding="utf-8", errors="replace"),
        )

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout)


def _sigint_as_on_a_terminal() -> None:
    """Give the child SIGINT's default disposition, as a shell in a terminal does.

    A job started in the background of a non-interactive shell (``cmd &``, nohup, many CI
    launchers) inherits SIGINT *ignored*, and Python then installs no KeyboardInterrupt handler:
    the Ctrl-C these tests send would be dropped and every interrupt test would wait out its work.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def pytest_process(
    args: list[str], *, cwd: Path, env: Mapping[str, str] | None = None, logs: Path, mark: str | None = None
) -> Iterator[PytestProcess]:
    """Start ``python -m pytest *args`` in its own session; on exit kill it and everything it left."""
    mark = mark or new_mark()
    logs.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = logs / f"pytest-{mark[:8]}.out", logs / f"pytest-{mark[:8]}.err"
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", *QUIET_PLUGINS, *args],
            cwd=cwd,
            env=child_env(env, mark=mark),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            preexec_fn=_sigint_as_on_a_terminal,
        )
    try:
        yield PytestProcess(proc, stdout_path, stderr_path, mark)
    finally:
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        kill_marked(mark)
