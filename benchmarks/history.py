"""The trend across runs (issue 54): ``render --history`` over 1,000 reports of 1,000 samples.

The reports are generated (not run): each sample record has the keys and sizes of a real run's
(a 200-character output, one assertion, usage and model calls), about 1 KB, so a report is about
1 MB and the thousand about 1 GB. Outcomes come from ``random.Random(54)``: most samples pass
every run, some fail from a run on, some flip. Each report has its own ``startedAt`` and the files
are named in an order unrelated to it, as CI artifacts are.

Measured, each as a subprocess with its peak RSS (:func:`benchmarks._support.run`): reading every
file with ``json.load`` alone (the floor: what any reader of these files must pay), then
``python -m pytest_omk render --history`` writing the HTML, Markdown and JSON, over all the
reports and over the first one alone. Targets: wall and CPU time (user + system, the steadier
figure on a shared host) ≤ 2× the floor's; the memory each further
(run, sample) costs, (peak with all − peak with one) ÷ (cells − cells of one), at most a tenth of
the report text each cell takes: the trend keeps a compact form of each run, never the documents
(which, parsed, take several times their text). The floor keeps nothing, so its peak RSS is shown
without a target. The quick run takes 100 reports of 1,000 samples.
"""

from __future__ import annotations

import json
import random
import resource
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks import _support as s

REPORTS, QUICK_REPORTS = 1000, 100
SAMPLES = 1000
WALL_TARGET = 2.0
CELL_TARGET = 0.1
FLOOR = (
    "import json, sys\nfor name in sys.argv[1:]:\n    with open(name, 'rb') as fh:\n        json.load(fh)\n"
)
OUTPUT = "The answer, as a model would write it: " + "lorem ipsum dolor sit amet " * 6


def _record(index: int, passed: bool) -> dict[str, Any]:
    score = 5.0 if passed else 1.0
    return {
        "nodeid": f"evals/eval-samples.json::sample-{index:04d}", "file": "evals/eval-samples.json",
        "sample_id": f"sample-{index:04d}", "line": 3 + index * 9, "prompt": f"Question number {index}?",
        "variant": None, "outcome": "passed" if passed else "failed", "executor": "openai", "model": "m",
        "scores": {"assertions": score, "fact": score, "behavior": None, "judge": None, "composite": score},
        "assertions": [{"index": 0, "type": "contains", "layer": "fact", "weight": 1.0,
                        "status": "pass" if passed else "fail", "message": "the output contains 'answer'"}],
        "rubric": {}, "execution": {"output": OUTPUT, "costUSD": 0.00012, "latencyMs": 812.5, "inputTokens": 41,
                                    "outputTokens": 57, "numTurns": 1, "toolCalls": None, "replayed": True,
                                    "retries": 0},
        "metadata": {}, "modelCalls": {"live": 0, "replayed": 1},
        "usage": {"model": {"calls": 1, "live": 0, "replayed": 1, "failed": 0, "inputTokens": 41,
                            "outputTokens": 57, "costUSD": 0.0, "costUnknown": 0}},
        "urls": [], "error": None, "judgeRecordingsIgnored": False, "repeats": None, "skipReason": None,
        "inputDigest": f"{index:064x}", "carried": False, "mutation": None,
    }  # fmt: skip


def _plan(reports: int) -> list[list[bool]]:
    """Per sample, whether it passes in each run."""
    rng = random.Random(54)
    plan = []
    for _ in range(SAMPLES):
        kind = rng.random()
        if kind < 0.9:
            plan.append([True] * reports)
        elif kind < 0.95:
            start = rng.randrange(reports)
            plan.append([run < start for run in range(reports)])
        else:
            plan.append([rng.random() < 0.7 for _ in range(reports)])
    return plan


def write_reports(folder: Path, reports: int) -> list[str]:
    """The reports, named in a shuffled order; their names."""
    plan = _plan(reports)
    names = [f"report-{n:04d}.json" for n in random.Random(5454).sample(range(reports), reports)]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for run, name in enumerate(names):
        document = {
            "schemaVersion": "pytest-omk.report/v1", "plugin": {"version": "bench"}, "config": {},
            "summary": {"samples": SAMPLES}, "exitStatus": 0,
            "startedAt": (start + timedelta(hours=run)).isoformat(timespec="seconds"),
            "durationS": 12.5, "collection": {"items": SAMPLES, "digest": "sha256:" + "a" * 64},
            "samples": [_record(i, plan[i][run]) for i in range(SAMPLES)],
        }  # fmt: skip
        (folder / name).write_text(json.dumps(document), encoding="utf-8")
    return names


def _timed(argv: list[str], root: Path) -> tuple[s.RunResult, float]:
    """The run, and the CPU time (user + system) it and its children took: on a loaded host the
    wall clock says as much about the neighbours as about the code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = s.run(argv, cwd=root, timeout=3600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return result, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(quick: bool) -> list[s.Row]:
    """Time and measure the floor and the trend over the same files."""
    reports = QUICK_REPORTS if quick else REPORTS
    outputs = ("--html", "trend.html", "--markdown", "trend.md", "--json", "trend.json")
    with s.workdir("history") as root:
        names = write_reports(root, reports)
        floor, floor_cpu = _timed([s.PYTHON, "-c", FLOOR, *names], root)
        one = s.run([s.PYTHON, "-m", "pytest_omk", "render", "--history", names[0], *outputs], cwd=root)
        trend, trend_cpu = _timed(
            [s.PYTHON, "-m", "pytest_omk", "render", "--history", *names, *outputs], root
        )
        if floor.returncode or one.returncode or trend.returncode:
            raise s.BenchmarkError(
                f"history: exit {floor.returncode}/{trend.returncode}: {trend.output[-400:]}"
            )
        states = json.loads((root / "trend.json").read_text(encoding="utf-8"))["samples"]
        flagged = sum(1 for sample in states if sample["state"] != "stable")
        size = sum((root / n).stat().st_size for n in names)
    label = f"render --history, {reports:,} reports × {SAMPLES:,} samples ({size / 1e6:,.0f} MB)"
    per_cell = (trend.peak_rss_mb - one.peak_rss_mb) * 1024 * 1024 / ((reports - 1) * SAMPLES)
    text_per_cell = size / (reports * SAMPLES)
    return [
        s.target_row(
            f"{label}: wall", trend.wall, floor.wall, reference_label="json.load alone", limit=WALL_TARGET,
            notes=[f"history: {flagged} of {SAMPLES} samples flagged; outputs HTML, Markdown, JSON; "
                   f"peak RSS with one report {one.peak_rss_mb:.0f} MB"],
        ),
        s.target_row(
            f"{label}: CPU (user + system)", trend_cpu, floor_cpu, reference_label="json.load alone",
            limit=WALL_TARGET,
        ),
        s.target_row(
            f"{label}: peak RSS", trend.peak_rss_mb, floor.peak_rss_mb, unit="MB",
            reference_label="json.load alone",
        ),
        s.target_row(
            "render --history: memory per further (run, sample)", per_cell, text_per_cell, unit="B",
            reference_label="report text per (run, sample)", limit=CELL_TARGET,
            figure=f"{per_cell:.0f} B", comparison=f"report text per (run, sample) {text_per_cell:.0f} B",
        ),
    ]  # fmt: skip
