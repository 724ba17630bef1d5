"""Concurrency: N samples, one model call each, against the loopback fake model at 250 ms a call.

The plugin submits every selected item's calls before the run loop starts, so with
``--omk-concurrency C`` the calls overlap C at a time: the ideal is calls × latency ÷ C. Under
xdist the plugin does not prefetch (a worker would call items another worker runs), so ``-n 2``
is the "no prefetch" comparison: two processes, each calling one item at a time.

Ratios use the run time pytest reports (session start to end, collection and xdist start-up
included); the wall column adds interpreter start and imports (about a second here).
"""

from __future__ import annotations

from benchmarks import _support as s
from benchmarks.samples import CANNED_OUTPUT, make_samples, write_samples

FULL, QUICK = 200, 40
LATENCY = 0.25
LEVELS = (1, 8, 32)


def run(quick: bool) -> list[s.Row]:
    count = QUICK if quick else FULL
    rows: list[s.Row] = []
    with s.workdir("concurrency") as root:
        s.project_file(root)
        write_samples(root, make_samples(count, rubric=0))
        with s.fake_llm(root, s.fake_script(latency=LATENCY, reply=CANNED_OUTPUT)) as url:
            env = s.openai_env(url)
            runs: dict[str, s.RunResult] = {}
            for level in LEVELS:
                # The slow sequential run once; the fast ones best of three.
                tries = [
                    s.run_pytest(*s.live_args(level), cwd=root, env=env, expect={"passed": count})
                    for _ in range(1 if level == 1 else 3)
                ]
                runs[f"c{level}"] = min(tries, key=s.session_seconds)
            runs["n2"] = s.run_pytest(
                *s.live_args(32),
                "-n",
                "2",
                cwd=root,
                env=env,
                expect={"passed": count},
                plugins=("pytest_omk.plugin", "xdist.plugin"),
            )
        rows += _rows(count, runs)
    return rows


def _rows(count: int, runs: dict[str, s.RunResult]) -> list[s.Row]:
    sequential = s.session_seconds(runs["c1"])
    rows: list[s.Row] = []
    for level in LEVELS:
        result = runs[f"c{level}"]
        seconds = s.session_seconds(result)
        ideal = count * LATENCY / level
        rounds = -(-count // level) * LATENCY
        rows.append(
            s.target_row(
                f"{count} calls × {LATENCY * 1000:.0f} ms, concurrency {level}",
                seconds,
                ideal,
                reference_label="ideal",
                limit=1.25 if level == 32 else None,
                notes=[
                    f"concurrency {level} ({'one run' if level == 1 else 'best of 3'}): wall {s.fmt(result.wall)} (pytest reports {s.fmt(seconds)}); "
                    f"whole rounds of {level} calls need ≥ {s.fmt(rounds)}; peak RSS {result.peak_rss_mb:.0f} MB"
                ],
                figure=f"{s.fmt(seconds)} (wall {s.fmt(result.wall)})",
            )
        )
    c32 = s.session_seconds(runs["c32"])
    rows.append(
        s.target_row(
            f"speed-up of concurrency 32 over 1 ({count} calls)",
            sequential / c32,
            1.0,
            unit="×",
            reference_label="sequential",
            limit=20,
            at_least=True,
            figure=f"{sequential / c32:.1f}×",
            comparison=f"{s.fmt(sequential)} ÷ {s.fmt(c32)}",
        )
    )
    n2 = s.session_seconds(runs["n2"])
    rows.append(
        s.target_row(
            f"-n 2, no prefetch ({count} calls)",
            n2,
            c32,
            reference_label="concurrency 32",
            figure=f"{s.fmt(n2)} (wall {s.fmt(runs['n2'].wall)})",
        )
    )
    return rows
