"""Grading: 5,000 samples × 5 deterministic assertions, full pytest run, against hand-written pytest.

The model under test is a Python callable returning a canned answer, so the run measures what the
plugin adds around it: collection, the call path, grading, one subtest per assertion, the scores
section. The baselines are what a user would write without the plugin, reading the same sample
file and applying the same checks to the same answer: one parametrized test using pytest's
``subtests`` fixture (one subtest per check, the plugin's shape), and one with plain ``assert``s.
Every answer passes every check, as most of a healthy suite does.

Then one more omk run under cProfile says where the time goes.
"""

from __future__ import annotations

import json
import pstats
from collections.abc import Callable
from pathlib import Path

from benchmarks import _support as s
from benchmarks.samples import make_samples, write_canned_executor, write_samples

FULL, QUICK = 5_000, 1_000
ASSERTIONS = 5

_BASELINE_HEAD = '''\
"""Hand-written equivalent of the omk run: same samples, same answer, same checks."""

import json
import re
from pathlib import Path

import pytest

from bench_canned import answer

SAMPLES = json.loads((Path(__file__).parent / "samples.json").read_text(encoding="utf-8"))["samples"]
IDS = [sample["sample_id"] for sample in SAMPLES]


def _words(text):
    return len(text.split())


CHECKS = {
    "contains": lambda out, a: a["value"].lower() in out.lower(),
    "not_contains": lambda out, a: a["value"].lower() not in out.lower(),
    "regex": lambda out, a: re.search(a["pattern"], out, re.IGNORECASE) is not None,
    "max_length": lambda out, a: len(out) <= a["value"],
    "min_length": lambda out, a: len(out) >= a["value"],
    "contains_any": lambda out, a: any(v.lower() in out.lower() for v in a["values"]),
    "contains_all": lambda out, a: all(v.lower() in out.lower() for v in a["values"]),
    "word_count_min": lambda out, a: _words(out) >= a["value"],
    "starts_with": lambda out, a: out.lower().startswith(a["value"].lower()),
    "ends_with": lambda out, a: out.lower().endswith(a["value"].lower()),
}
'''

_SUBTESTS = """

@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_sample(sample, subtests):
    output = answer(sample)["output"]
    for index, assertion in enumerate(sample["assertions"]):
        with subtests.test(msg=f"assertion {index}: {assertion['type']}"):
            assert CHECKS[assertion["type"]](output, assertion)
"""

_PLAIN = """

@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_sample(sample):
    output = answer(sample)["output"]
    for assertion in sample["assertions"]:
        assert CHECKS[assertion["type"]](output, assertion), assertion
"""


def _setup(root: Path, count: int) -> tuple[dict[str, Path], str]:
    samples = make_samples(count, rubric=0, assertions=ASSERTIONS)
    dirs = {name: root / name for name in ("omk", "subtests", "plain")}
    spec = ""
    for name, directory in dirs.items():
        directory.mkdir()
        s.project_file(directory)
        spec = write_canned_executor(directory)
        if name == "omk":
            write_samples(directory, samples)
        else:
            (directory / "samples.json").write_text(json.dumps({"samples": samples}), encoding="utf-8")
            body = _SUBTESTS if name == "subtests" else _PLAIN
            (directory / f"test_{name}.py").write_text(_BASELINE_HEAD + body, encoding="utf-8")
    return dirs, spec


def run(quick: bool) -> list[s.Row]:
    count = QUICK if quick else FULL
    repeats = 2
    with s.workdir("grading") as root:
        dirs, spec = _setup(root, count)
        omk_args = ("--omk-executor", spec, "--omk-record-mode", "off", "--omk-judge", "none")
        runs: dict[str, Callable[[], s.RunResult]] = {
            "omk": lambda: s.run_pytest(*omk_args, cwd=dirs["omk"], expect={"passed": count}),
            "subtests": lambda: s.run_pytest(cwd=dirs["subtests"], plugins=(), expect={"passed": count}),
            "plain": lambda: s.run_pytest(cwd=dirs["plain"], plugins=(), expect={"passed": count}),
        }
        best: dict[str, s.RunResult] = {}
        for _ in range(repeats):
            for name, func in runs.items():
                result = func()
                if name not in best or result.wall < best[name].wall:
                    best[name] = result
        profile = ("-m", "cProfile", "-o", str(root / "omk.prof"))
        s.run_pytest(*omk_args, cwd=dirs["omk"], expect={"passed": count}, prefix=profile)
        omk_profile = profile_breakdown(root / "omk.prof")
        profile = ("-m", "cProfile", "-o", str(root / "subtests.prof"))
        s.run_pytest(cwd=dirs["subtests"], plugins=(), expect={"passed": count}, prefix=profile)
        subtests_profile = profile_breakdown(root / "subtests.prof")

    omk = best["omk"].wall
    label = f"{count:,}×{ASSERTIONS}"
    notes = [
        f"grading: best of {repeats}, interleaved; omk peak RSS {best['omk'].peak_rss_mb:.0f} MB, "
        f"subtests baseline {best['subtests'].peak_rss_mb:.0f} MB, plain {best['plain'].peak_rss_mb:.0f} MB",
        f"grading: where the time goes (cProfile, main thread; profiling inflates Python-heavy parts) — "
        f"omk: {omk_profile}",
        f"grading: subtests baseline under the same profile: {subtests_profile}",
    ]
    return [
        s.target_row(
            f"grade {label}, omk vs subtests fixture",
            omk,
            best["subtests"].wall,
            reference_label="subtests",
            limit=1.3,
            notes=notes,
        ),
        s.target_row(
            f"grade {label}, omk vs plain asserts", omk, best["plain"].wall, reference_label="plain"
        ),
        s.Row(
            f"grade {label}: wall per sample",
            s.fmt(omk / count * 1000, "ms"),
            f"subtests {s.fmt(best['subtests'].wall / count * 1000, 'ms')}, "
            f"plain {s.fmt(best['plain'].wall / count * 1000, 'ms')}",
        ),
    ]


# --- where the time goes ---------------------------------------------------------------------------


def profile_breakdown(path: Path) -> str:
    """Split a cProfile dump of a pytest run (main thread) into disjoint phases, in seconds.

    startup = imports and configuration before the session; collection; setup = item setup (the
    plugin waits for the item's model call there); grading = the plugin's grading, scoring and
    records; subtest reports = entering and leaving ``subtests.test`` (output capture, the report,
    its logreport hooks, the terminal); item reports = the rest of the run protocol (three reports
    per item, capture and logging around each phase); session = configure, session start and
    finish (summary, the omk scores section); other = what is left.
    """
    table = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]

    def cum(suffix: str, func: str) -> float:
        return float(
            sum(e[3] for (file, _l, name), e in table.items() if name == func and file.endswith(suffix))
        )

    total = max((entry[3] for entry in table.values()), default=0.0)
    cmdline = cum("_pytest/main.py", "pytest_cmdline_main")
    session = cum("_pytest/main.py", "wrap_session")
    main = cum("_pytest/main.py", "_main")
    collection = cum("_pytest/main.py", "perform_collect")
    protocol = cum("_pytest/runner.py", "call_and_report")
    setup = cum("_pytest/runner.py", "pytest_runtest_setup")
    call = cum("_pytest/runner.py", "pytest_runtest_call")
    teardown = cum("_pytest/runner.py", "pytest_runtest_teardown")
    subtests = cum("_pytest/subtests.py", "__enter__") + cum("_pytest/subtests.py", "__exit__")
    omk_grade = cum("pytest_omk/plugin/subtests.py", "grade_and_report")
    grading = max(0.0, omk_grade - subtests) if omk_grade else 0.0
    phases = {
        "startup": total - cmdline,
        "collection": collection,
        "setup": setup,
        "grading": grading,
        "subtest reports": subtests,
        "test body": max(0.0, call - omk_grade - (0.0 if omk_grade else subtests)),
        "item reports": protocol - setup - call - teardown,
        "teardown": teardown,
        "session start/finish": session - main,
    }
    phases["other"] = max(0.0, total - sum(phases.values()))
    parts = [f"{label} {sec:.1f} s ({sec / total:.0%})" for label, sec in phases.items() if sec >= 0.05]
    return f"total {total:.1f} s = " + ", ".join(parts)
