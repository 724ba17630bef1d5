"""Run the benchmark suite and print one table: ``python -m benchmarks [--quick] [--only NAME]``.

Each benchmark is a module of this package with ``run(quick: bool) -> list[Row]``; it generates its
inputs into a temp dir and drives pytest in subprocesses. Timings are printed, never asserted: the
``met?`` column compares ratios measured in the same run with the targets in docs/performance.md.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import signal
import sys
import time
from collections.abc import Sequence
from importlib import metadata
from types import FrameType

from benchmarks import _support as s

BENCHMARKS = (
    "startup",
    "collection",
    "grading",
    "concurrency",
    "judge",
    "replay",
    "app_replay",
    "gateway",
    "calls",
    "otel",
    "shards",
    "history",
)
COLUMNS = ("benchmark", "name", "figure", "comparison", "ratio", "target", "met?")


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (else what :mod:`platform` knows)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def header() -> str:
    """The machine and the versions the figures were measured with."""
    import yaml

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return "\n".join(
        [
            f"machine: {cpu_model()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
            f"load average at start {load}",
            f"python {platform.python_version()} ({sys.executable}); pytest {_version('pytest')}, "
            f"pydantic {_version('pydantic')}, pyyaml {_version('PyYAML')} "
            f"(libyaml {'yes' if getattr(yaml, '__with_libyaml__', False) else 'no'}), "
            f"pytest-xdist {_version('pytest-xdist')}, httpx {_version('httpx')}, pytest-omk {_version('pytest-omk')}",
        ]
    )


def _ratio(value: float | None) -> str:
    if value is None:
        return ""
    return "inf" if value == float("inf") else f"{value:.2f}×"


def _met(value: bool | None) -> str:
    return "" if value is None else ("yes" if value else "NO")


def table(results: Sequence[tuple[str, s.Row]]) -> str:
    """An aligned pipe table (valid Markdown), then the rows' notes."""
    cells = [list(COLUMNS)] + [
        [bench, row.name, row.figure, row.comparison, _ratio(row.ratio), row.target, _met(row.met)]
        for bench, row in results
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    out = [line(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(values) for values in cells[1:]]
    notes = [note for _, row in results for note in row.notes]
    if notes:
        out.append("")
        out += [f"- {note}" for note in notes]
    return "\n".join(out)


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, fewer repeats (~3 minutes)")
    parser.add_argument(
        "--only",
        action="append",
        choices=BENCHMARKS,
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}",
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)

    s.warm_bytecode()
    print(header(), flush=True)
    print(f"mode: {'quick' if args.quick else 'full'}", flush=True)
    results: list[tuple[str, s.Row]] = []
    failed = False
    started = time.perf_counter()
    try:
        for name in args.only or BENCHMARKS:
            module = importlib.import_module(f"benchmarks.{name}")
            print(f"running {name}…", end="", flush=True)
            t0 = time.perf_counter()
            try:
                rows = module.run(args.quick)
            except s.BenchmarkError as exc:
                failed = True
                rows = [s.Row(name="could not measure", figure="error", notes=(f"{name}: {exc}",))]
            print(f" {time.perf_counter() - t0:.0f} s", flush=True)
            results += [(name, row) for row in rows]
    except KeyboardInterrupt:
        s.cleanup()
        print("\ninterrupted; child processes stopped", file=sys.stderr)
        if results:
            print(table(results))
        return 130
    finally:
        s.cleanup()
    print(f"\ntotal {time.perf_counter() - started:.0f} s\n")
    print(table(results))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
