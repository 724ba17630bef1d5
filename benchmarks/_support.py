"""What every benchmark shares: result rows, running pytest in a subprocess, the fake model server.

Every child process is started in its own process group and registered here, so that
:func:`cleanup` (called by the runner on any exit, Ctrl-C included) can end the whole group. Wall
time is measured around the child from the parent; peak memory is the kernel's ``ru_maxrss`` of
that one child, read through GNU time (see :func:`run`). Children it reaped itself, such as xdist
workers, count as the largest of them, not their sum.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable

_live: dict[int, subprocess.Popen[Any]] = {}
_live_lock = threading.Lock()


class BenchmarkError(RuntimeError):
    """A benchmark could not produce a trustworthy figure (a run failed, a server did not start)."""


@dataclass(frozen=True)
class Row:
    """One line of the results table.

    ``ratio`` is figure ÷ comparison (``None`` when there is nothing to compare with); ``met`` is
    ``None`` for rows without a target.
    """

    name: str
    figure: str
    comparison: str = ""
    ratio: float | None = None
    target: str = ""
    met: bool | None = None
    notes: tuple[str, ...] = field(default=())
    """Lines printed under the table (breakdowns, caveats)."""


def target_row(
    name: str,
    value: float,
    reference: float,
    *,
    unit: str = "s",
    reference_label: str,
    limit: float | None = None,
    at_least: bool = False,
    notes: Sequence[str] = (),
    figure: str | None = None,
    comparison: str | None = None,
) -> Row:
    """A row comparing ``value`` with ``reference``: ratio = value ÷ reference.

    ``limit`` is the target ratio: met when ratio ≤ limit, or when ratio ≥ limit with ``at_least``.
    """
    ratio = value / reference if reference > 0 else float("inf")
    target, met = "", None
    if limit is not None:
        target = f"{'≥' if at_least else '≤'} {limit:g}×"
        met = ratio >= limit if at_least else ratio <= limit
    return Row(
        name=name,
        figure=fmt(value, unit) if figure is None else figure,
        comparison=f"{reference_label} {fmt(reference, unit)}" if comparison is None else comparison,
        ratio=ratio,
        target=target,
        met=met,
        notes=tuple(notes),
    )


def budget_note(
    prefix: str,
    *,
    floor: str,
    reference: str,
    target: str,
    floor_ratio: float,
    limit: float,
    plugin_ratio: float,
) -> str:
    """Whether a wall-clock target is within reach on this host at all.

    ``floor_ratio`` is what pytest alone, running the same items without the plugin, takes against
    the target's ``reference``; ``limit`` is the target as a ratio of that reference and
    ``plugin_ratio`` the plugin's run against the pytest floor. On a host where the floor alone
    misses the target no pytest plugin can meet it, and the plugin's own share is the figure to read.
    """
    head = f"{prefix}: {floor} alone takes {floor_ratio:.2f}× {reference}"
    if floor_ratio > limit:
        return (
            f"{head}, over the target ({target}) before any plugin work: no pytest plugin meets it on "
            f"this host; the plugin takes {plugin_ratio:.2f}× that floor"
        )
    return f"{head}, leaving the plugin {limit / floor_ratio:.2f}× that floor for the target ({target}); it takes {plugin_ratio:.2f}×"


def fmt(value: float, unit: str = "s") -> str:
    """A figure with its unit, with as many decimals as its size deserves."""
    if unit == "s":
        return f"{value:.2f} s" if value >= 1 else f"{value * 1000:.0f} ms"
    if unit == "ms":
        return f"{value:.3f} ms" if value < 1 else f"{value:.2f} ms"
    if unit == "MB":
        return f"{value:.0f} MB"
    return f"{value:g} {unit}"


# --- child processes -------------------------------------------------------------------------------


def _register(proc: subprocess.Popen[Any]) -> None:
    with _live_lock:
        _live[proc.pid] = proc


def _unregister(proc: subprocess.Popen[Any]) -> None:
    with _live_lock:
        _live.pop(proc.pid, None)


def _kill_group(proc: subprocess.Popen[Any], sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def cleanup() -> None:
    """End every child process group still running (SIGTERM, then SIGKILL after a grace period)."""
    with _live_lock:
        procs = list(_live.values())
    for proc in procs:
        _kill_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + 3
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.wait(max(0.1, deadline - time.monotonic()))
        _kill_group(proc, signal.SIGKILL)
        with contextlib.suppress(Exception):
            proc.wait(1)
        _unregister(proc)


def base_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every child: no provider keys, no proxies, no autoloaded plugins."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "PYTEST_", "OMK_"))
        and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # Bytecode is cached as in an installed plugin (pip compiles a wheel's modules; an editable
    # install writes its caches on first import). An inherited PYTHONDONTWRITEBYTECODE (this
    # machine's environment sets it) made every child compile the plugin from source, about
    # 0.04 s of a 200-sample collection's 0.45 s, which no user pays. warm_bytecode() fills the
    # caches first.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONHASHSEED"] = "0"
    env.update(extra or {})
    return env


def warm_bytecode() -> None:
    """Compile the plugin's modules to their bytecode caches, as installing it would."""
    import compileall

    import pytest_omk

    compileall.compile_dir(str(Path(pytest_omk.__file__).parent), quiet=1)


@dataclass(frozen=True)
class RunResult:
    """What one child run cost, and the tail of what it printed."""

    wall: float
    peak_rss_mb: float
    returncode: int
    output: str


GNU_TIME = Path("/usr/bin/time")


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 900,
) -> RunResult:
    """Run ``argv`` to completion in its own process group; stdout+stderr go to a temp file.

    Peak RSS comes from GNU time when it is installed: Linux counts the pre-exec copy of a forking
    parent into the child's ``ru_maxrss``, so this (large) process would inflate every child's
    figure, while ``/usr/bin/time`` is a small parent. Without it, ``os.wait4``'s figure is used.
    """
    with tempfile.TemporaryFile(mode="w+b") as out, tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        command = list(argv)
        if GNU_TIME.exists():
            command = [str(GNU_TIME), "-f", "%M", "-o", rss.name, *command]
        start = time.perf_counter()
        proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env or base_env()),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        _register(proc)
        timer = threading.Timer(timeout, _kill_group, (proc,))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
        finally:
            timer.cancel()
            if proc.returncode is None:
                _kill_group(proc)
                with contextlib.suppress(Exception):
                    proc.wait(5)
            _unregister(proc)
        out.seek(0)
        text = out.read().decode(errors="replace")
        reported = [int(x) for x in rss.read().split() if x.isdigit()]
    if wall >= timeout:
        raise BenchmarkError(f"{' '.join(argv[:6])}… timed out after {timeout:g}s")
    # Both figures are in kilobytes on Linux.
    peak_kb = reported[-1] if reported else usage.ru_maxrss
    return RunResult(wall=wall, peak_rss_mb=peak_kb / 1024, returncode=proc.returncode, output=text)


def pytest_argv(
    *args: str, plugins: Sequence[str] = ("pytest_omk.plugin",), cache: bool = False
) -> list[str]:
    """``python -m pytest`` with only the named plugins (autoload is off in :func:`base_env`)."""
    argv = [PYTHON, "-m", "pytest"]
    for plugin in plugins:
        argv += ["-p", plugin]
    if not cache:
        argv += ["-p", "no:cacheprovider"]
    return [*argv, *args]


_SUMMARY = re.compile(
    r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected|subtests passed|subtests failed)"
)


def outcome_counts(output: str) -> dict[str, int]:
    """The counts of pytest's last summary line (``5000 passed, 25000 subtests passed in 9.1s``)."""
    lines = [line for line in output.strip().splitlines() if line.strip()]
    last = next((line for line in reversed(lines) if re.search(r"\bin [\d.]+s\b", line)), "")
    counts: dict[str, int] = {}
    for number, word in _SUMMARY.findall(last):
        counts[word.rstrip("s") if word.startswith("error") else word] = int(number)
    return counts


def reported_seconds(output: str) -> float | None:
    """The duration in pytest's final summary line (``... in 3.52s``), if any."""
    found = re.findall(r"\bin ([\d.]+)s\b", output)
    return float(found[-1]) if found else None


def run_pytest(
    *args: str,
    cwd: Path,
    expect: Mapping[str, int],
    env: Mapping[str, str] | None = None,
    plugins: Sequence[str] = ("pytest_omk.plugin",),
    cache: bool = False,
    prefix: Sequence[str] = (),
    timeout: float = 900,
) -> RunResult:
    """Run pytest and check its summary holds at least the ``expect`` counts (else the figure lies)."""
    argv = pytest_argv(*args, plugins=plugins, cache=cache)
    if prefix:
        argv = [PYTHON, *prefix, *argv[1:]]
    result = run(argv, cwd=cwd, env=env, timeout=timeout)
    counts = outcome_counts(result.output)
    wrong = {k: v for k, v in expect.items() if counts.get(k, 0) != v}
    if wrong or result.returncode not in (0, 1):
        tail = "\n".join(result.output.strip().splitlines()[-15:])
        raise BenchmarkError(
            f"pytest {' '.join(args)} in {cwd} did not give {dict(expect)} (got {counts}, exit "
            f"{result.returncode}):\n{tail}"
        )
    return result


def median_run(runs: Sequence[RunResult]) -> RunResult:
    """The run with the median wall time (the middle one of an odd number)."""
    return sorted(runs, key=lambda r: r.wall)[len(runs) // 2]


def walls(runs: Sequence[RunResult]) -> str:
    """The runs' wall times in seconds, in run order: ``2.01 / 2.06 / 1.98``."""
    return " / ".join(f"{r.wall:.2f}" for r in runs)


def rotated(items: Sequence[T], index: int) -> list[T]:
    """``items`` started at round ``index``'s turn, so no variant always runs right after the same
    other one in interleaved rounds (a burst of load on this shared machine hits them alike)."""
    shift = index % len(items)
    return [*items[shift:], *items[:shift]]


def median_rss(runs: Sequence[RunResult]) -> float:
    """The median peak RSS of ``runs`` in MB (taken on its own: not the median-wall run's)."""
    return sorted(r.peak_rss_mb for r in runs)[len(runs) // 2]


def best_of(n: int, func: Any) -> tuple[float, RunResult]:
    """Run ``func()`` (returning a :class:`RunResult`) ``n`` times; the fastest wall and its run."""
    best: RunResult | None = None
    for _ in range(max(1, n)):
        result = func()
        if best is None or result.wall < best.wall:
            best = result
    assert best is not None
    return best.wall, best


def project_file(directory: Path) -> None:
    """An empty ini file, so the temp dir is pytest's rootdir and no outer config leaks in."""
    (directory / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")


def live_args(concurrency: int, *, judge: bool = False) -> tuple[str, ...]:
    """Options for a live run against the fake (no recordings)."""
    return (
        "--omk-executor",
        "openai",
        "--omk-model",
        "bench-model",
        "--omk-judge",
        "openai" if judge else "none",
        "--omk-judge-model",
        "bench-judge",
        "--omk-record-mode",
        "off",
        "--omk-concurrency",
        str(concurrency),
        "-q",
    )


def session_seconds(result: RunResult) -> float:
    """The run time pytest reports (session start to end)."""
    seconds = reported_seconds(result.output)
    if seconds is None:
        raise BenchmarkError("no duration in pytest's summary line")
    return seconds


_LIVE_CALLS = re.compile(r"model calls: (\d+) live, (\d+) replayed")


def model_calls(output: str) -> tuple[int, int]:
    """(live, replayed) from the plugin's totals line (``model calls: 400 live, 0 replayed``)."""
    found = _LIVE_CALLS.findall(output)
    if not found:
        raise BenchmarkError("no 'model calls' line in the omk scores section")
    live, replayed = found[-1]
    return int(live), int(replayed)


def check_calls(result: RunResult, *, live: int, replayed: int = 0) -> None:
    """Fail the benchmark unless the run made exactly these model calls (judge included)."""
    got = model_calls(result.output)
    if got != (live, replayed):
        raise BenchmarkError(
            f"expected {live} live and {replayed} replayed model calls, got {got[0]} and {got[1]}"
        )


# --- the fake model server ---------------------------------------------------------------------------

JUDGE_REPLY = json.dumps({"score": 4, "reason": "The answer meets the criterion."})
"""What the fake answers every judge call (judge system prompts say "judge")."""


def fake_script(*, latency: float, reply: str) -> dict[str, Any]:
    """A script for ``tests.fakes.fake_llm``: judge prompts get a valid score, the rest ``reply``."""
    return {"default": reply, "latency": latency, "rules": [{"system": "judge", "reply": JUDGE_REPLY}]}


@contextlib.contextmanager
def fake_llm(workdir: Path, script: Mapping[str, Any], port: int = 0) -> Iterator[str]:
    """Run the loopback fake model server as a child process; yields its OpenAI base URL.

    ``port`` 0 picks a free one; a fixed port lets recordings made against one server replay with
    that URL later (the endpoint is part of a recording's key).
    """
    script_path = workdir / "fake-llm-script.json"
    script_path.write_text(json.dumps(script), encoding="utf-8")
    argv = [PYTHON, "-m", "tests.fakes.fake_llm", "--port", str(port), "--script", str(script_path)]
    proc = subprocess.Popen(
        argv,
        cwd=REPO_ROOT,
        env=base_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    _register(proc)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.isdigit():
            raise BenchmarkError(f"the fake LLM server did not report a port (got {line!r})")
        yield f"http://127.0.0.1:{int(line)}/v1"
    finally:
        _kill_group(proc, signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        _unregister(proc)


def openai_env(base_url: str) -> dict[str, str]:
    """The child environment for ``--omk-executor openai`` against the fake."""
    return base_env({"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-benchmark-dummy"})


def free_port() -> int:
    """A loopback TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def workdir(name: str) -> Iterator[Path]:
    """A fresh temp directory, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=f"omk-bench-{name}-") as path:
        yield Path(path)


@contextlib.contextmanager
def workdir_in(parent: Path | None, name: str) -> Iterator[Path]:
    """A fresh temp directory under ``parent`` (the default temp dir when ``None``), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=f"omk-bench-{name}-", dir=parent) as path:
        yield Path(path)
