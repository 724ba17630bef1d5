"""``render --history``: eight real runs with planted histories, read back as a trend.

Each run is a real pytest run of one sample file through a scripted executor and a scripted judge
(Python functions in the project reading the run's script: a command per sample would spend a
child interpreter on each of 184 calls, and what is read back is the report, whoever answered),
scripted differently per run; each run's clock starts on its own day, so ``startedAt`` orders them. Planted: a sample that breaks in run 8, one that breaks in run 6, one
that flaps, one fixed in run 7, one failing in every run, stable ones, and judged samples whose
judge scores slide over the last five runs (still passing).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.support import REPO, OmkRun, omk_command, sample, write_sample_set
from tests.support.clock import start_runs_at

RUNS = 8
DAY = 86_400
START = 1_796_000_000  # 2026-11-30, a fixed day: run k starts k days later
STABLE = [f"stable-{i}" for i in range(6)]
JUDGED = [f"judged-{i}" for i in range(6)]
JUDGE_SCORES = [5, 5, 5, 4, 4, 4, 3, 3]
"""Per run, the judge's score of every judged sample: the last five runs lower, all still passing."""
PLANTED_FAILS = {
    "breaks-8": {8},
    "breaks-6": {6, 7, 8},
    "flaps": {2, 4, 6, 8},
    "fixed-7": {1, 2, 3, 4, 5, 6},
    "always-fails": set(range(1, RUNS + 1)),
}
TREND_SCHEMA = REPO / "schemas" / "trend" / "v1" / "trend.schema.json"


def _samples() -> list[dict[str, Any]]:
    checked = [
        sample(name, f"say {name}", assertions=[{"type": "contains", "value": "good"}])
        for name in [*PLANTED_FAILS, *STABLE]
    ]
    rubric = {"tone": {"criterion": "Is it kind?", "weight": 1}}
    return checked + [sample(name, f"judge {name}", rubric=rubric) for name in JUDGED]


SCRIPTED = """\
import json
from pathlib import Path


def _script():
    return json.loads(Path("history-script.json").read_text(encoding="utf-8"))


def answer(request):
    return _script()["answers"][request.sample_id]


def judge(request):
    score = _script()["judge"][request.sample_id]
    return json.dumps({"score": score, "reason": "scripted judge reply"})
"""
"""The executor and the judge, answering per ``sample_id`` from the run's ``history-script.json``."""


def _run(omk_run: OmkRun, cwd: Path, run: int) -> None:
    answers = {name: ("bad" if run in fails else "good") for name, fails in PLANTED_FAILS.items()}
    answers |= {name: "good" for name in [*STABLE, *JUDGED]}
    judged = dict.fromkeys(JUDGED, JUDGE_SCORES[run - 1])
    script = {"answers": answers, "judge": judged}
    (cwd / "history-script.json").write_text(json.dumps(script), encoding="utf-8")
    result = omk_run(
        "--omk-executor=python:history_scripted:answer",
        "--omk-judge=python:history_scripted:judge",
        f"--omk-report=reports/run-{run}.json",
    )
    failing = sum(1 for fails in PLANTED_FAILS.values() if run in fails)
    # A failed sample counts twice: the item and its failed check's subtest.
    result.assert_outcomes(passed=len(_samples()) - failing, failed=2 * failing)


@pytest.fixture
def eight_reports(pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    write_sample_set(pytester, *_samples())
    pytester.makepyfile(history_scripted=SCRIPTED)
    pytester.syspathinsert()
    for run in range(1, RUNS + 1):
        start_runs_at(monkeypatch, START + run * DAY)
        _run(omk_run, pytester.path, run)
    return [f"reports/run-{run}.json" for run in range(1, RUNS + 1)]


def _trend(cwd: Path, reports: list[str], name: str) -> dict[str, Any]:
    done = omk_command(
        cwd, "render", "--history", *reports,
        "--html", f"{name}.html", "--markdown", f"{name}.md", "--json", f"{name}.json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads((cwd / f"{name}.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(json.loads(TREND_SCHEMA.read_text(encoding="utf-8"))).validate(document)
    return document


def _states(document: dict[str, Any]) -> dict[str, tuple[str, int | None]]:
    return {s["nodeid"].split("::")[1]: (s["state"], s["since"]) for s in document["samples"]}


def test_planted_states_and_the_slide_are_found_in_any_order_and_nothing_else(
    pytester: pytest.Pytester, eight_reports: list[str]
) -> None:
    trend = _trend(pytester.path, eight_reports, "trend")
    states = _states(trend)
    flagged = {name: state for name, state in states.items() if state[0] != "stable"}
    assert flagged == {
        "breaks-8": ("newly failing", 8),
        "breaks-6": ("failing since", 6),
        "flaps": ("flaky", None),
        "fixed-7": ("fixed", 7),
        "always-fails": ("failing", None),
    }
    assert {name for name, state in states.items() if state[0] == "stable"} == {*STABLE, *JUDGED}
    assert [run["startedAt"][:10] for run in trend["runs"]] == [
        f"2026-12-{day:02d}" for day in range(1, RUNS + 1)
    ]
    assert [s["sampleSet"] for s in trend["runs"]] == [1] * RUNS and len(trend["sampleSets"]) == 1
    slides = {s["layer"]: s for s in trend["sliding"]}
    assert slides["judge"]["recentRuns"] == [4, 5, 6, 7, 8] and slides["judge"]["previousRuns"] == [1, 2, 3]
    assert slides["judge"]["meanDifference"] == -1.4 and slides["judge"]["pairs"] == len(JUDGED)
    # The composite is the mean of a sample's layers: the judged samples' (judge only) slides with it.
    assert {layer for layer, s in slides.items() if s["sliding"]} == {"judge", "composite"}
    assert not slides["fact"]["sliding"] and not slides["assertions"]["sliding"]
    by_name = {s["nodeid"].split("::")[1]: s for s in trend["samples"]}
    assert "".join(m[0] for m in by_name["flaps"]["outcomes"]) == "pfpfpfpf"
    assert by_name["judged-0"]["composite"] == [float(score) for score in JUDGE_SCORES]

    markdown = (pytester.path / "trend.md").read_text(encoding="utf-8")
    assert (
        "5 stable" not in markdown and f"{len(STABLE) + len(JUDGED)} stable samples not listed." in markdown
    )
    assert "newly failing (run 8)" in markdown and "failing since run 6" in markdown
    assert "| judge |" in markdown and markdown.count("**sliding**") == 2
    html = (pytester.path / "trend.html").read_text(encoding="utf-8")
    assert html.count('data-sliding="true"') == 2 and html.count('<tr class="trend-sample"') == 17
    assert '<tr class="trend-sample" data-state="fixed" data-since="7">' in html

    # The same reports in any order give the same trend, byte for byte.
    shuffled = list(eight_reports)
    random.Random(54).shuffle(shuffled)
    assert shuffled != eight_reports
    assert _trend(pytester.path, shuffled, "shuffled") == trend
    for suffix in ("md", "html"):
        assert (pytester.path / f"shuffled.{suffix}").read_bytes() == (
            pytester.path / f"trend.{suffix}"
        ).read_bytes()


def test_runs_of_different_sample_sets_are_shown_as_such(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = [{"type": "contains", "value": "good"}]
    pytester.makepyfile(history_good_app="def answer(request):\n    return 'good'\n")
    pytester.syspathinsert()
    executor = "--omk-executor=python:history_good_app:answer"
    sets = [["a", "b", "c"], ["a", "b", "c"], ["a", "c", "d"], ["a", "c", "d"]]
    for run, names in enumerate(sets, start=1):
        write_sample_set(pytester, *(sample(n, f"say {n}", assertions=check) for n in names))
        start_runs_at(monkeypatch, START + run * DAY)
        omk_run(executor, f"--omk-report=r{run}.json").assert_outcomes(passed=3)
    trend = _trend(pytester.path, [f"r{run}.json" for run in (4, 2, 3, 1)], "sets")
    assert [run["sampleSet"] for run in trend["runs"]] == [1, 1, 2, 2]
    second = trend["sampleSets"][1]
    assert (second["runs"], second["added"], second["removed"]) == (
        [3, 4],
        ["eval-samples.json::d"],
        ["eval-samples.json::b"],
    )
    assert trend["sampleSets"][0]["digest"] != second["digest"]
    by_name = {s["nodeid"].split("::")[1]: s for s in trend["samples"]}
    assert by_name["b"]["outcomes"] == ["pass", "pass", "absent", "absent"]
    assert (by_name["d"]["firstRun"], by_name["d"]["state"]) == (3, "stable")
    markdown = (pytester.path / "sets.md").read_text(encoding="utf-8")
    assert "**2 sample sets**" in markdown
    assert "runs 3-4; 1 added: eval-samples.json::d; 1 removed: eval-samples.json::b" in markdown
    html = (pytester.path / "sets.html").read_text(encoding="utf-8")
    assert "ran different sample sets" in html and html.count('<tr data-run="') == 4
    assert "<td>1-2 (removed after run 2)</td>" in html and "<td>3-4 (added in run 3)</td>" in html


FLIPPING_APP = """\
def answer(request):
    # "wobbly" passes on its first and third repeats only; "steady" always.
    if request.sample_id == "wobbly" and request.repeat == 1:
        return "bad"
    return "good"
"""


def test_a_pass_rate_between_0_and_1_under_repeats_is_flaky_though_every_outcome_passed(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = [{"type": "contains", "value": "good"}]
    write_sample_set(pytester, *(sample(n, f"say {n}", assertions=check) for n in ("steady", "wobbly")))
    pytester.makepyfile(history_flipping_app=FLIPPING_APP)
    pytester.syspathinsert()
    for run in (1, 2):
        start_runs_at(monkeypatch, START + run * DAY)
        omk_run(
            "--omk-executor=python:history_flipping_app:answer", "--omk-repeat=3", "--omk-min-pass-rate=0.5",
            f"--omk-report=r{run}.json",
        ).assert_outcomes(passed=2)  # fmt: skip
    trend = _trend(pytester.path, ["r2.json", "r1.json"], "repeats")
    states = {
        s["nodeid"].split("::")[1]: (s["state"], s["outcomes"], s["repeatedFlaky"]) for s in trend["samples"]
    }
    assert states == {
        "wobbly": ("flaky", ["pass", "pass"], True),
        "steady": ("stable", ["pass", "pass"], False),
    }
    assert "flaky (pass rate between 0 and 1 under repeats)" in (pytester.path / "repeats.md").read_text(
        encoding="utf-8"
    )
