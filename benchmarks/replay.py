"""Replay and live runs at scale (the figures issue 8 asks for).

1. N samples end to end from recordings: record once against the fake at latency 0
   (``--omk-record-mode all``), then time a ``--omk-record-mode none`` run (no server: a miss would
   be an error) and a ``--collect-only`` run of the same; the difference is grading and reporting.
2. M samples live, one executor call and two rubric dimensions each, 250 ms a call, concurrency
   32, against the ideal max(calls × latency ÷ 32, 2 × latency); and the same with ``-n 2``, where
   the plugin does not prefetch and each worker calls one item at a time.

These runs keep pytest's cache provider: recordings are what is being measured, and a user's
replaying CI has it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from benchmarks import _support as s
from benchmarks.judge import ideal_seconds
from benchmarks.samples import CANNED_OUTPUT, make_samples, write_samples

REPLAY_FULL, REPLAY_QUICK = 10_000, 1_000
LIVE_FULL, LIVE_QUICK = 1_000, 60
LATENCY = 0.25
CONCURRENCY = 32
LIVE_DIMENSIONS = 2
XDIST = ("pytest_omk.plugin", "xdist.plugin")


def _omk(mode: str, recordings: Path | str = "recordings") -> tuple[str, ...]:
    return (
        "--omk-executor",
        "openai",
        "--omk-model",
        "bench-model",
        "--omk-judge",
        "openai",
        "--omk-judge-model",
        "bench-judge",
        "--omk-record-mode",
        mode,
        "--omk-recordings",
        str(recordings),
        "--omk-concurrency",
        str(CONCURRENCY),
        "-q",
    )


def _tmpfs() -> Path | None:
    """A RAM-backed directory, where fsync costs nothing (``/dev/shm`` on Linux), if there is one."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else None


def _count_files(directory: Path) -> tuple[int, float]:
    files = [p for p in directory.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files) / 1e6


def replay_rows(count: int) -> list[s.Row]:
    samples = make_samples(count)
    calls = sum(1 + len(sample.get("rubric", {})) for sample in samples)
    tmpfs = _tmpfs()
    with s.workdir("replay") as root, s.workdir_in(tmpfs, "replay") as shm:
        ram = shm if tmpfs else None
        s.project_file(root)
        write_samples(root, samples)
        # Recording is set-up here, not the figure: it writes to tmpfs (where fsync is free) to stay
        # quick, then the files are copied into the project.
        with s.fake_llm(root, s.fake_script(latency=0.0, reply=CANNED_OUTPUT)) as url:
            env = s.openai_env(url)
            recorded = s.run_pytest(
                *_omk("all", (ram or root) / "recorded"),
                cwd=root,
                env=env,
                cache=True,
                expect={"passed": count},
                timeout=1800,
            )
        s.check_calls(recorded, live=calls)
        shutil.copytree((ram or root) / "recorded", root / "recordings")
        files, megabytes = _count_files(root / "recordings")
        # The server is gone: every call must come from the recordings.
        replayed = s.run_pytest(*_omk("none"), cwd=root, env=env, cache=True, expect={"passed": count})
        s.check_calls(replayed, live=0, replayed=calls)
        collected = s.run_pytest(*_omk("none"), "--collect-only", cwd=root, env=env, cache=True, expect={})
    grading = replayed.wall - collected.wall
    per_sample = replayed.wall / count * 1000
    return [
        s.Row(
            f"replay {count:,} samples ({calls:,} calls) from recordings",
            f"{s.fmt(replayed.wall)}, {replayed.peak_rss_mb:.0f} MB",
            f"collect-only {s.fmt(collected.wall)}",
            notes=(
                f"replay: {files:,} recording files, {megabytes:.0f} MB; pytest reports "
                f"{s.fmt(s.session_seconds(replayed))} for the replay run; recording them took "
                f"{s.fmt(recorded.wall)} ({'tmpfs' if ram else 'disk'}, concurrency {CONCURRENCY})",
            ),
        ),
        s.Row(
            "replay: time per sample",
            s.fmt(per_sample, "ms"),
            f"collection {s.fmt(collected.wall / count * 1000, 'ms')} + grading/reporting "
            f"{s.fmt(grading / count * 1000, 'ms')}",
        ),
    ]


def live_rows(count: int) -> list[s.Row]:
    calls = count * (1 + LIVE_DIMENSIONS)
    ideal = ideal_seconds(count, 1 + LIVE_DIMENSIONS, LATENCY, CONCURRENCY)
    with s.workdir("live") as root:
        s.project_file(root)
        write_samples(root, make_samples(count, rubric=LIVE_DIMENSIONS))
        with s.fake_llm(root, s.fake_script(latency=LATENCY, reply=CANNED_OUTPUT)) as url:
            env = s.openai_env(url)
            prefetch = s.run_pytest(*_omk("off"), cwd=root, env=env, expect={"passed": count})
            s.check_calls(prefetch, live=calls)
            xdist = s.run_pytest(
                *_omk("off"),
                "-n",
                "2",
                cwd=root,
                env=env,
                plugins=XDIST,
                expect={"passed": count},
                timeout=1800,
            )
            s.check_calls(xdist, live=calls)
    seconds, n2 = s.session_seconds(prefetch), s.session_seconds(xdist)
    label = f"live {count:,} samples × (1 + {LIVE_DIMENSIONS} judge) calls"
    return [
        s.target_row(
            f"{label}, concurrency {CONCURRENCY}",
            seconds,
            ideal,
            reference_label="ideal",
            figure=f"{s.fmt(seconds)} (wall {s.fmt(prefetch.wall)})",
            notes=[
                f"live: {calls:,} calls × {LATENCY * 1000:.0f} ms; peak RSS {prefetch.peak_rss_mb:.0f} MB "
                f"(-n 2: {xdist.peak_rss_mb:.0f} MB, the largest process)"
            ],
        ),
        s.target_row(
            f"{label}, -n 2 (no prefetch)",
            n2,
            ideal,
            reference_label="ideal",
            figure=f"{s.fmt(n2)} (wall {s.fmt(xdist.wall)})",
        ),
    ]


def run(quick: bool) -> list[s.Row]:
    return [
        *replay_rows(REPLAY_QUICK if quick else REPLAY_FULL),
        *live_rows(LIVE_QUICK if quick else LIVE_FULL),
    ]
