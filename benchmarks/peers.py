"""Peers (opt-in, not in CI): the network-bound workload with promptfoo, inspect_ai and deepeval.

``python -m benchmarks.peers [--keep DIR] [--repeats 3]``

Installs promptfoo (npm, into a temp folder) and inspect_ai, deepeval and openai (a temporary
virtualenv) through the package registries' ordinary clients, then runs the workload of
:mod:`benchmarks.workload` (200 samples, one chat completion each against the loopback fake at
250 ms, 2 deterministic checks, 32 in flight) with each of them, with pytest-omk in process and
under ``-n 2``, and with the bare httpx client (the floor). Every tool gets a dummy key and a base
URL pointing at the fake: nothing leaves the machine. The runs are interleaved (one round runs
every tool once), the table gives the median wall time and peak RSS of each, and a tool that could
not be run gets the reason instead of a figure. ``--keep DIR`` installs into (or reuses) ``DIR``
instead of a temp folder.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import _peer_scripts as scripts
from benchmarks import _support as s
from benchmarks import workload as w
from benchmarks.__main__ import header
from benchmarks.samples import CANNED_OUTPUT, write_samples

PIP_PACKAGES = ("inspect_ai", "deepeval", "openai")
NPM_PACKAGE = "promptfoo"
QUIET = {
    "PROMPTFOO_DISABLE_TELEMETRY": "1",
    "PROMPTFOO_DISABLE_UPDATE": "1",
    "PROMPTFOO_DISABLE_SHARING": "1",
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",
    "INSPECT_DISABLE_TELEMETRY": "1",
}
"""No telemetry, update checks or sharing: the only network is the loopback fake."""


class PeerUnavailable(RuntimeError):
    """A peer could not be installed or made to run offline; the message goes into the table."""


@dataclass
class Peer:
    """One column of work: how to run it once, and what it cost each time."""

    name: str
    version: str
    run_once: Callable[[], s.RunResult] | None
    reason: str = ""
    runs: list[s.RunResult] = field(default_factory=list)


@dataclass(frozen=True)
class Install:
    """Where the peers were installed."""

    python: Path
    promptfoo: Path


def _step(argv: Sequence[str], cwd: Path, what: str, timeout: float = 1800) -> None:
    done = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **QUIET}
    )
    if done.returncode != 0:
        raise PeerUnavailable(f"{what} failed: {(done.stderr or done.stdout).strip()[-300:]}")


def install(directory: Path) -> Install:
    """A virtualenv with :data:`PIP_PACKAGES` and an npm folder with promptfoo, unless present."""
    venv, npm = directory / "venv", directory / "npm"
    python = venv / "bin" / "python"
    if not python.exists():
        _step([sys.executable, "-m", "venv", str(venv)], directory, "python -m venv")
        _step([str(python), "-m", "pip", "install", "-q", *PIP_PACKAGES], directory, "pip install")
    promptfoo = npm / "node_modules" / ".bin" / "promptfoo"
    if not promptfoo.exists():
        npm.mkdir(exist_ok=True)
        _step(["npm", "init", "-y"], npm, "npm init")
        _step(["npm", "install", "--no-audit", "--no-fund", NPM_PACKAGE], npm, "npm install promptfoo")
    return Install(python=python, promptfoo=promptfoo)


def _pip_version(python: Path, dist: str) -> str:
    code = f"from importlib.metadata import version; print(version({dist!r}))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return done.stdout.strip() or "?"


def _checked(result: s.RunResult, passed: int, expected: int, name: str) -> s.RunResult:
    if result.returncode != 0 or passed != expected:
        tail = "\n".join(result.output.strip().splitlines()[-8:])
        raise PeerUnavailable(f"{name}: {passed} of {expected} passed (exit {result.returncode}): {tail}")
    return result


def _last_json(output: str) -> dict[str, object]:
    for line in reversed(output.strip().splitlines()):
        with contextlib.suppress(json.JSONDecodeError):
            data = json.loads(line)
            if isinstance(data, dict):
                return data
    return {}


def _passed(output: str) -> int:
    value = _last_json(output).get("passed", -1)
    return value if isinstance(value, int) else -1


def peers(root: Path, where: Install, url: str, count: int) -> list[Peer]:
    """The tools to run, each with its run function (run in ``root``, against ``url``)."""
    prompts = root / "prompts.json"
    rows = json.loads(prompts.read_text(encoding="utf-8"))
    env = {**s.openai_env(url), **QUIET, "FAKE_BASE_URL": url, "FAKE_API_KEY": "sk-benchmark-dummy"}
    env["HOME"] = str(root / "home")  # promptfoo, inspect and deepeval write their state under it
    (root / "home").mkdir(exist_ok=True)
    (root / "promptfooconfig.json").write_text(scripts.promptfoo_config(rows, url), encoding="utf-8")
    (root / "inspect_task.py").write_text(scripts.INSPECT_AI, encoding="utf-8")
    (root / "deepeval_eval.py").write_text(scripts.DEEPEVAL, encoding="utf-8")
    xdist = ("pytest_omk.plugin", "xdist.plugin")

    def omk(*extra: str, plugins: tuple[str, ...] = ("pytest_omk.plugin",)) -> s.RunResult:
        args = (*s.live_args(w.CONCURRENCY), *extra)
        return s.run_pytest(*args, cwd=root, env=env, plugins=plugins, expect={"passed": count})

    def promptfoo() -> s.RunResult:
        out = root / "promptfoo-results.json"
        argv = [str(where.promptfoo), "eval", "-c", "promptfooconfig.json", "-j", str(w.CONCURRENCY)]
        argv += ["--no-cache", "--no-write", "--no-table", "--no-progress-bar", "--no-share", "-o", str(out)]
        result = s.run(argv, cwd=root, env=env)
        passed = scripts.promptfoo_passed(json.loads(out.read_text("utf-8"))) if out.exists() else -1
        out.unlink(missing_ok=True)
        return _checked(result, passed, count, "promptfoo")

    def inspect_ai() -> s.RunResult:
        argv = [str(where.python), "inspect_task.py", str(prompts), str(root / "inspect-logs")]
        result = s.run(argv, cwd=root, env=env)
        return _checked(result, _passed(result.output), count, "inspect_ai")

    def deepeval() -> s.RunResult:
        result = s.run([str(where.python), "deepeval_eval.py", str(prompts)], cwd=root, env=env)
        return _checked(result, _passed(result.output), count, "deepeval")

    here = _pip_version(Path(sys.executable), "pytest-omk")
    return [
        Peer(
            "bare httpx client (floor)",
            _pip_version(Path(sys.executable), "httpx"),
            lambda: w.run_bare_client(root, prompts, env, w.CONCURRENCY),
        ),
        Peer("pytest-omk, in process", here, omk),
        Peer("pytest-omk, -n 2", here, lambda: omk("-n", "2", plugins=xdist)),
        Peer("promptfoo eval -j 32", _npm_version(where.promptfoo), promptfoo),
        Peer("inspect_ai, max_connections 32", _pip_version(where.python, "inspect_ai"), inspect_ai),
        Peer("deepeval evaluate, max_concurrent 32", _pip_version(where.python, "deepeval"), deepeval),
    ]


def _npm_version(promptfoo: Path) -> str:
    package = promptfoo.parents[1] / "promptfoo" / "package.json"
    with contextlib.suppress(OSError, ValueError):
        return str(json.loads(package.read_text("utf-8"))["version"])
    return "?"


def measure(tools: list[Peer], repeats: int) -> None:
    """Interleaved rounds; a tool that fails once is marked unavailable with the reason."""
    for index in range(repeats):
        for tool in s.rotated(tools, index):
            if tool.run_once is None:
                continue
            try:
                tool.runs.append(tool.run_once())
            except (PeerUnavailable, s.BenchmarkError) as exc:
                tool.run_once, tool.reason = None, str(exc).splitlines()[0][:200]
                tool.runs.clear()


def table(tools: list[Peer], count: int) -> str:
    """One Markdown table: median wall, its ratio to the floor, median peak RSS, or the reason."""
    floor = _median([r.wall for r in tools[0].runs]) if tools[0].runs else None
    lines = [
        "| tool | version | wall (median of runs) | vs floor | peak RSS | runs (wall, s) |",
        "|---|---|---|---|---|---|",
    ]
    for tool in tools:
        if not tool.runs:
            lines.append(f"| {tool.name} | {tool.version} | not measured: {tool.reason} | | | |")
            continue
        wall = _median([r.wall for r in tool.runs])
        rss = _median([r.peak_rss_mb for r in tool.runs])
        ratio = f"{wall / floor:.2f}×" if floor else ""
        runs = s.walls(tool.runs)
        lines.append(f"| {tool.name} | {tool.version} | {s.fmt(wall)} | {ratio} | {rss:.0f} MB | {runs} |")
    lines.append("")
    lines.append(
        f"{count} samples, one chat completion each at {w.LATENCY * 1000:.0f} ms (loopback fake), "
        f"2 checks, {w.CONCURRENCY} in flight; whole rounds need "
        f"{s.fmt(w.whole_rounds(count, w.CONCURRENCY, w.LATENCY))}. Peak RSS: under -n 2 the largest "
        "process; for promptfoo the node process."
    )
    return "\n".join(lines)


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


@contextlib.contextmanager
def _install_dir(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="omk-peers-") as path:
        yield Path(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, help="install into (or reuse) this folder instead of a temp one")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--samples", type=int, default=w.SAMPLES, help=f"samples (default {w.SAMPLES})")
    args = parser.parse_args(argv)
    s.warm_bytecode()
    print(header(), flush=True)
    started = time.perf_counter()
    try:
        with _install_dir(args.keep) as place, s.workdir("peers") as root:
            try:
                where = install(place)
            except (PeerUnavailable, subprocess.TimeoutExpired) as exc:
                print(f"could not install the peers: {exc}", file=sys.stderr)
                return 1
            print(f"installed in {time.perf_counter() - started:.0f} s", flush=True)
            s.project_file(root)
            samples = w.workload_samples(args.samples)
            write_samples(root, samples)
            w.write_prompts(root, samples)
            with s.fake_llm(root, s.fake_script(latency=w.LATENCY, reply=CANNED_OUTPUT)) as url:
                tools = peers(root, where, url, args.samples)
                measure(tools, args.repeats)
    finally:
        s.cleanup()
    print(f"measured in {time.perf_counter() - started:.0f} s\n")
    print(table(tools, args.samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
