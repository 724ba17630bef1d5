"""Concurrency: the network-bound workload (200 samples, 2 checks, 250 ms a call, 32 in flight).

Three clients of the same loopback fake run interleaved, three rounds, and each is the median of
its three runs:

- the plugin in one process, ``--omk-concurrency 32``;
- the plugin under ``-n 2`` with the same ``--omk-concurrency 32`` (a total across workers);
- a bare ``httpx.AsyncClient`` script making the same calls at 32 in flight and applying the same
  two checks (:mod:`benchmarks.workload`): the real floor on this harness.

Ratios compare wall times (interpreter start, imports, collection and xdist start-up included:
what a user waits for). The bound of whole rounds, ⌈200 ÷ 32⌉ × 250 ms = 1.75 s, is printed with
them; no client can beat it, and none reaches it (each round costs the harness some milliseconds).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from benchmarks import _support as s
from benchmarks import workload as w
from benchmarks.samples import CANNED_OUTPUT, write_samples

QUICK = 40
ROUNDS = 3
XDIST = ("pytest_omk.plugin", "xdist.plugin")


def median_run(runs: list[s.RunResult]) -> s.RunResult:
    """The run with the median wall time (the middle one of an odd number)."""
    return sorted(runs, key=lambda r: r.wall)[len(runs) // 2]


def _walls(runs: list[s.RunResult]) -> str:
    return " / ".join(f"{r.wall:.2f}" for r in runs) + " s"


def run(quick: bool) -> list[s.Row]:
    count = QUICK if quick else w.SAMPLES
    with s.workdir("concurrency") as root:
        s.project_file(root)
        samples = w.workload_samples(count)
        write_samples(root, samples)
        prompts = w.write_prompts(root, samples)
        with s.fake_llm(root, s.fake_script(latency=w.LATENCY, reply=CANNED_OUTPUT)) as url:
            env = s.openai_env(url)

            def omk(*extra: str, plugins: tuple[str, ...] = ("pytest_omk.plugin",)) -> s.RunResult:
                result = s.run_pytest(
                    *s.live_args(w.CONCURRENCY),
                    *extra,
                    cwd=root,
                    env=env,
                    plugins=plugins,
                    expect={"passed": count},
                )
                s.check_calls(result, live=count)
                return result

            variants: dict[str, Callable[[], s.RunResult]] = {
                "omk": omk,
                "n2": lambda: omk("-n", "2", plugins=XDIST),
                "bare": lambda: w.run_bare_client(root, prompts, env, w.CONCURRENCY),
            }
            runs: dict[str, list[s.RunResult]] = {name: [] for name in variants}
            names = list(variants)
            for index in range(ROUNDS):
                # Rotate the order, so no variant always runs right after the same other one.
                for name in names[index % len(names) :] + names[: index % len(names)]:
                    runs[name].append(variants[name]())
    return _rows(count, runs)


def _rows(count: int, runs: dict[str, list[s.RunResult]]) -> list[s.Row]:
    omk, n2, bare = (median_run(runs[name]) for name in ("omk", "n2", "bare"))
    rounds = w.whole_rounds(count, w.CONCURRENCY, w.LATENCY)
    bare_inner = float(json.loads(bare.output.strip().splitlines()[-1])["seconds"])
    label = f"{count} samples × 2 checks, 250 ms, 32 in flight"
    return [
        s.target_row(
            f"{label}: in process vs bare httpx",
            omk.wall,
            bare.wall,
            reference_label="bare httpx",
            limit=1.15,
            notes=[
                f"concurrency: wall of 3 interleaved runs — in process {_walls(runs['omk'])}, -n 2 "
                f"{_walls(runs['n2'])}, bare httpx {_walls(runs['bare'])}; medians used",
                f"concurrency: pytest reports {s.fmt(s.session_seconds(omk))} in process and "
                f"{s.fmt(s.session_seconds(n2))} under -n 2; the bare client's own timer "
                f"{s.fmt(bare_inner)} (wall minus interpreter start)",
                f"concurrency: peak RSS in process {omk.peak_rss_mb:.0f} MB, -n 2 {n2.peak_rss_mb:.0f} MB "
                f"(largest process), bare httpx {bare.peak_rss_mb:.0f} MB",
            ],
        ),
        s.target_row(
            f"{label}: -n 2 vs in process",
            n2.wall,
            omk.wall,
            reference_label="in process",
            limit=1.3,
        ),
        s.target_row(
            f"{label}: in process vs whole rounds",
            omk.wall,
            rounds,
            reference_label=f"⌈{count}÷{w.CONCURRENCY}⌉ × 250 ms",
        ),
        s.target_row(
            f"{label}: bare httpx vs whole rounds",
            bare.wall,
            rounds,
            reference_label=f"⌈{count}÷{w.CONCURRENCY}⌉ × 250 ms",
        ),
    ]
