"""Calls: what ``--omk-repeat auto`` and ``--omk-changed`` save (issue 46).

- **Adaptive repeats.** A mixed set of 200 samples, decided before it was first measured: 120
  stable samples that pass every run, 40 that fail every run, and 40 flaky ones whose pass
  probability is drawn from ``random.Random(46).uniform(0.3, 0.95)``, each run's outcome drawn
  from the same generator. The model under test is a Python callable answering from that table
  by sample and repeat index, so both runs see the same outcomes for the same runs. Run once with
  ``--omk-repeat 10`` and once with ``--omk-repeat auto`` (maximum 10), both at
  ``--omk-min-pass-rate 0.8``: the calls (the plugin's live-call count) and each sample's outcome
  (the JSON reports) are compared. Target: ≤ 0.4× the calls with every decision equal.
- **Only what changed.** 1,000 generated samples run once with ``--omk-report``; one sample's
  prompt is edited; then ``--omk-baseline base.json --omk-changed`` must run one sample (one live
  call). Its wall time is compared with pytest collecting the same file and running that one
  sample alone (``-k`` on its id): the least any selection can cost. Target: ≤ 1.2×. Three
  interleaved rounds, medians.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from benchmarks import _support as s
from benchmarks.samples import CANNED_OUTPUT, make_samples, write_samples

STABLE_PASS, STABLE_FAIL, FLAKY = 120, 40, 40
QUICK_SCALE = 4
MAXIMUM = 10
MIN_PASS_RATE = 0.8
CALLS_TARGET = 0.4
CHANGED_SAMPLES, CHANGED_QUICK = 1000, 200
CHANGED_TARGET = 1.2
ROUNDS = 3

EXECUTOR = """\
import json
import pathlib

TABLE = json.loads((pathlib.Path(__file__).parent / "outcomes.json").read_text(encoding="utf-8"))


def answer(request):
    return "alpha" if TABLE[request.sample_id][request.repeat] else "omega"
"""

CANNED = f"""\
def answer(request):
    return {CANNED_OUTPUT!r}
"""


def mixed_outcomes(scale: int = 1) -> dict[str, list[bool]]:
    """Per sample id, the outcome of each of the ``MAXIMUM`` runs (see the module docstring)."""
    rng = random.Random(46)
    table: dict[str, list[bool]] = {}
    for i in range(STABLE_PASS // scale):
        table[f"stable-pass-{i:03d}"] = [True] * MAXIMUM
    for i in range(STABLE_FAIL // scale):
        table[f"stable-fail-{i:03d}"] = [False] * MAXIMUM
    for i in range(FLAKY // scale):
        rate = rng.uniform(0.3, 0.95)
        table[f"flaky-{i:03d}"] = [rng.random() < rate for _ in range(MAXIMUM)]
    return table


def _outcomes(report: Path) -> dict[str, str]:
    document = json.loads(report.read_text(encoding="utf-8"))
    return {row["sample_id"]: row["outcome"] for row in document["samples"]}


def _repeats(quick: bool) -> list[s.Row]:
    table = mixed_outcomes(QUICK_SCALE if quick else 1)
    count = len(table)
    with s.workdir("calls-auto") as root:
        s.project_file(root)
        (root / "outcomes.json").write_text(json.dumps(table), encoding="utf-8")
        (root / "bench_outcomes.py").write_text(EXECUTOR, encoding="utf-8")
        samples = [
            {
                "sample_id": name,
                "prompt": f"answer {name}",
                "assertions": [{"type": "contains", "value": "alpha"}],
            }
            for name in table
        ]
        write_samples(root, samples)
        common = (
            "--omk-executor",
            "python:bench_outcomes:answer",
            # A stand-in for a model: its answers count as model calls (an app's would not).
            "--omk-app-record",
            "answers",
            "--omk-app-digest",
            "version:1",
            "--omk-record-mode",
            "off",
            "--omk-min-pass-rate",
            str(MIN_PASS_RATE),
            "-q",
            "-p",
            "no:randomly",
        )
        env = s.base_env({"PYTHONPATH": str(root)})
        fixed = s.run_pytest(
            *common, "--omk-repeat", str(MAXIMUM), "--omk-report", "fixed.json", cwd=root, env=env, expect={}
        )
        auto = s.run_pytest(
            *common,
            "--omk-repeat",
            "auto",
            "--omk-repeat-max",
            str(MAXIMUM),
            "--omk-report",
            "auto.json",
            cwd=root,
            env=env,
            expect={},
        )
        fixed_calls, _ = s.model_calls(fixed.output)
        auto_calls, _ = s.model_calls(auto.output)
        if fixed_calls != count * MAXIMUM:
            raise s.BenchmarkError(f"--omk-repeat {MAXIMUM} made {fixed_calls} calls, not {count * MAXIMUM}")
        decided_fixed, decided_auto = _outcomes(root / "fixed.json"), _outcomes(root / "auto.json")
    differ = sorted(name for name in table if decided_fixed.get(name) != decided_auto.get(name))
    ratio = auto_calls / fixed_calls
    equal = not differ
    flaky_calls = "per kind: " + _per_kind(table, auto_calls)
    return [
        s.Row(
            name=f"--omk-repeat auto (max {MAXIMUM}) vs --omk-repeat {MAXIMUM}, {count} samples "
            f"({STABLE_PASS // (QUICK_SCALE if quick else 1)} stable pass, {STABLE_FAIL // (QUICK_SCALE if quick else 1)} "
            f"stable fail, {FLAKY // (QUICK_SCALE if quick else 1)} flaky), min pass rate {MIN_PASS_RATE:g}",
            figure=f"{auto_calls} calls, {count - len(differ)}/{count} decisions equal",
            comparison=f"--omk-repeat {MAXIMUM}: {fixed_calls} calls",
            ratio=ratio,
            target=f"≤ {CALLS_TARGET:g}× and every decision equal",
            met=ratio <= CALLS_TARGET and equal,
            notes=(
                f"calls: auto decided differently from --omk-repeat {MAXIMUM} on {len(differ)} sample(s)"
                + (f": {', '.join(differ[:8])}" if differ else ""),
                f"calls: {flaky_calls}",
            ),
        )
    ]


def _per_kind(table: dict[str, list[bool]], total: int) -> str:
    kinds = {"stable-pass": 0, "stable-fail": 0, "flaky": 0}
    for name in table:
        kinds[name.rsplit("-", 1)[0]] += 1
    return ", ".join(f"{kind} {n} samples" for kind, n in kinds.items()) + f"; {total} calls in all"


def _changed(quick: bool) -> list[s.Row]:
    count = CHANGED_QUICK if quick else CHANGED_SAMPLES
    samples = make_samples(count)
    edited = samples[count // 2]["sample_id"]
    with s.workdir("calls-changed") as root:
        s.project_file(root)
        (root / "bench_canned.py").write_text(CANNED, encoding="utf-8")
        env = s.base_env({"PYTHONPATH": str(root)})
        common = (
            "--omk-executor",
            "python:bench_canned:answer",
            "--omk-app-record",
            "answers",
            "--omk-app-digest",
            "version:1",
            "--omk-judge",
            "none",
            "--omk-record-mode",
            "off",
            "-q",
        )
        write_samples(root, samples)
        s.run_pytest(*common, "--omk-report", "base.json", cwd=root, env=env, expect={"passed": count})
        samples[count // 2] = {**samples[count // 2], "prompt": samples[count // 2]["prompt"] + " (edited)"}
        write_samples(root, samples)
        runs: dict[str, list[s.RunResult]] = {"changed": [], "one": []}
        for index in range(ROUNDS):
            for name in s.rotated(list(runs), index):
                if name == "changed":
                    result = s.run_pytest(
                        *common,
                        "--omk-baseline",
                        "base.json",
                        "--omk-changed",
                        cwd=root,
                        env=env,
                        expect={"passed": 1, "deselected": count - 1},
                    )
                    live, _ = s.model_calls(result.output)
                    if live != 1:
                        raise s.BenchmarkError(
                            f"--omk-changed made {live} live calls after editing one sample, not 1"
                        )
                else:
                    result = s.run_pytest(
                        *common,
                        "-k",
                        edited,
                        cwd=root,
                        env=env,
                        expect={"passed": 1, "deselected": count - 1},
                    )
                runs[name].append(result)
    changed, one = s.median_run(runs["changed"]), s.median_run(runs["one"])
    return [
        s.target_row(
            f"--omk-changed after editing 1 of {count} samples (1 sample run, {count - 1} carried)",
            changed.wall,
            one.wall,
            reference_label="collect + run 1 sample (-k)",
            limit=CHANGED_TARGET,
            notes=[
                f"changed: walls of {ROUNDS} interleaved runs — --omk-changed {s.walls(runs['changed'])} s, "
                f"collect + one sample {s.walls(runs['one'])} s; medians used"
            ],
        )
    ]


def run(quick: bool) -> list[s.Row]:
    return [*_repeats(quick), *_changed(quick)]
