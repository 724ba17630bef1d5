"""Shards balanced by recorded latency (issue 52): 2,000 samples whose recorded latencies vary 50x,
cut into N = 4 shards by count and by durations, each shard replayed.

Figures, all measured in this one run:

- the heaviest shard's recorded seconds against the ideal (total ÷ N), by count and by durations
  (target: durations ≤ 1.15×; count is printed beside it, ≥ 2× on this skew);
- the merged report of the four durations shards against one replay of the whole set: identical
  apart from the timing fields (a note says so, or the row fails);
- ``python -m pytest_omk merge``'s wall time and peak memory against that one replay's.

The answers are recorded once by a Python model under test that states its own latency (no
sleeping): the first eighth of the samples 10 s each, the rest 0.2-1 s; the replays then read the
recorded latency, and ``--omk-store-durations`` writes it for the split.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from benchmarks import _support as s
from benchmarks.samples import CANNED_OUTPUT, make_samples, write_samples

FULL, QUICK = 2_000, 400
N = 4
TARGET = 1.15
TIMING = ("createdAt", "startedAt", "durationS", "latencyMs", "durationApiMs")

EXECUTOR = '''"""A model under test that says how long it took: the benchmark's skewed latencies."""
OUTPUT = %(output)r
SLOW = %(slow)d


def answer(request):
    index = int(request.sample_id.rsplit("-", 1)[1])
    return {"output": OUTPUT, "latencyMs": 10000.0 if index < SLOW else 200.0 + (index * 7919) %% 800}
'''


def _args(*more: str) -> tuple[str, ...]:
    return ("--omk-executor=python:bench_latency:answer", "--omk-app-record=answers",
            "--omk-recordings=recordings", "-q", *more)  # fmt: skip


def _timeless(path: Path) -> str:
    pattern = r'"(' + "|".join(TIMING) + r')": ("[^"]*"|-?[0-9][0-9.eE+-]*|null)'
    return re.sub(pattern, r'"\1": "<timing>"', path.read_text(encoding="utf-8"))


def _loads(root: Path, seconds: dict[str, float], how: str, count: int) -> tuple[float, list[float]]:
    """Replay the N shards cut ``how``; the heaviest shard's seconds over the ideal, and each shard's."""
    shard_seconds = []
    for k in range(1, N + 1):
        report = root / f"{how}-{k}.json"
        s.run_pytest(*_args("--omk-record-mode=none", f"--omk-shard={k}/{N}", f"--omk-shard-by={how}",
                            f"--omk-report={report}"), cwd=root, expect={})  # fmt: skip
        ids = [row["nodeid"] for row in json.loads(report.read_text(encoding="utf-8"))["samples"]]
        shard_seconds.append(sum(seconds[nodeid] for nodeid in ids))
    return max(shard_seconds) / (sum(seconds.values()) / N), shard_seconds


def run(quick: bool) -> list[s.Row]:
    """Record, write the durations, replay the shards both ways, merge; three rows."""
    count = QUICK if quick else FULL
    s.warm_bytecode()
    with s.workdir("shards") as root:
        (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
        (root / "bench_latency.py").write_text(
            EXECUTOR % {"output": CANNED_OUTPUT, "slow": count // 8}, encoding="utf-8"
        )
        write_samples(root, make_samples(count, rubric=0))
        s.run_pytest(*_args("--omk-record-mode=new_episodes"), cwd=root, expect={"passed": count})
        one = s.run_pytest(*_args("--omk-record-mode=none", "--omk-store-durations", "--omk-report=one.json"),
                           cwd=root, expect={"passed": count})  # fmt: skip
        seconds: dict[str, float] = json.loads((root / ".test_durations").read_text(encoding="utf-8"))
        by_count, count_seconds = _loads(root, seconds, "count", count)
        by_durations, duration_seconds = _loads(root, seconds, "durations", count)
        reports = [str(root / f"durations-{k}.json") for k in range(1, N + 1)]
        merge = s.run([s.PYTHON, "-m", "pytest_omk", "merge", *reports, "-o", "merged.json"], cwd=root)
        if merge.returncode != 0:
            raise s.BenchmarkError(f"merge failed:\n{merge.output[-2000:]}")
        merged, whole = _timeless(root / "merged.json"), _timeless(root / "one.json")
        same = merged == whole
        first = next((f"{a!r} / {b!r}" for a, b in zip(merged.splitlines(), whole.splitlines(), strict=False)
                      if a != b), "lengths")  # fmt: skip
    ideal = sum(seconds.values()) / N
    shards = ", ".join(f"{x:.0f}" for x in duration_seconds)
    notes: list[Any] = [
        f"{count} samples, recorded latency {min(seconds.values()):.1f}-{max(seconds.values()):.1f} s "
        f"(x{max(seconds.values()) / min(seconds.values()):.0f}); ideal shard {ideal:.0f} s",
        f"by count: shards {', '.join(f'{x:.0f}' for x in count_seconds)} s; by durations: {shards} s",
        f"merged report of the 4 durations shards identical to one replay apart from timing fields: "
        f"{'yes' if same else 'NO'}",
    ]
    if not same:
        raise s.BenchmarkError(f"the merged report differs from one run's beyond the timing fields: {first}")
    return [
        s.target_row(f"heaviest of {N} shards by durations, {count} samples", by_durations * ideal, ideal,
                     reference_label="ideal (total ÷ N)", limit=TARGET, notes=notes),
        s.target_row(f"heaviest of {N} shards by count, {count} samples", by_count * ideal, ideal,
                     reference_label="ideal (total ÷ N)", limit=2.0, at_least=True),
        s.target_row(f"merge of {N} shard reports, {count} samples", merge.wall, one.wall,
                     reference_label="one replay of the whole set",
                     notes=(f"peak memory: merge {merge.peak_rss_mb:.0f} MB, one replay {one.peak_rss_mb:.0f} MB",)),
    ]  # fmt: skip
