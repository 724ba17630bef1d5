"""End to end: ``--omk-repeat auto`` stops a stable sample early and runs a borderline one to the
maximum (issue 46). Calls are counted by the executor itself (one line per call in a log file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set

CONFTEST = """
import json
import pathlib

HERE = pathlib.Path(__file__).parent
# Per sample, the repeat indices whose answer fails the check.
FAILING = json.loads((HERE / "failing.json").read_text(encoding="utf-8"))


def answer(request):
    with (HERE / "calls.log").open("a", encoding="utf-8") as log:
        log.write(f"{request.sample_id} {request.repeat}\\n")
    failing = FAILING[request.sample_id]
    return "wrong" if failing == "all" or request.repeat in failing else "alpha"


def pytest_omk_make_executor(config):
    return answer
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    # borderline: 2 failures in 10 runs, 8/10 = the minimum pass rate exactly.
    failing = {"stable": [], "broken": "all", "borderline": [1, 6]}
    (pytester.path / "failing.json").write_text(json.dumps(failing), encoding="utf-8")
    check = [{"type": "contains", "value": "alpha"}]
    write_sample_set(pytester, *[sample(name, f"say {name}", assertions=check) for name in failing])
    return pytester


def calls(pytester: pytest.Pytester) -> dict[str, int]:
    counted: dict[str, int] = {}
    for line in (pytester.path / "calls.log").read_text(encoding="utf-8").splitlines():
        sample_id = line.split()[0]
        counted[sample_id] = counted.get(sample_id, 0) + 1
    return counted


def test_auto_repeat_stops_stable_samples_early(project: pytest.Pytester, omk_run: OmkRun) -> None:
    result = omk_run(
        "--omk-repeat", "auto", "--omk-min-pass-rate", "0.8", "--omk-report", "r.json", "--omk-html", "r.html"
    )
    made = calls(project)
    assert made["borderline"] == 10
    assert made["stable"] < 10
    assert made["broken"] <= 2
    assert result.ret == 1
    samples = report_samples(load_report(Path(project.path / "r.json")))
    for name, n in made.items():
        assert samples[name]["repeats"]["n"] == n
        assert samples[name]["repeats"]["auto"]["max"] == 10
        assert samples[name]["repeats"]["auto"]["saved"] == 10 - n
    assert samples["borderline"]["outcome"] == "passed"
    assert samples["broken"]["outcome"] == "failed"
    assert samples["stable"]["outcome"] == "passed"
    saved = sum(10 - n for n in made.values())
    assert f"{saved} saved" in result.stdout.str()
    assert f"({saved} saved)" in (project.path / "r.html").read_text(encoding="utf-8")


def test_auto_repeat_decisions_equal_the_maximum(project: pytest.Pytester, omk_run: OmkRun) -> None:
    auto = omk_run("--omk-repeat", "auto", "--omk-repeat-max", "10", "--omk-min-pass-rate", "0.8")
    fixed = omk_run("--omk-repeat", "10", "--omk-min-pass-rate", "0.8")
    assert auto.parseoutcomes() == fixed.parseoutcomes()


def test_repeat_max_without_auto_is_a_usage_error(project: pytest.Pytester, omk_run: OmkRun) -> None:
    result = omk_run("--omk-repeat", "3", "--omk-repeat-max", "5")
    assert result.ret == 4
    assert "--omk-repeat-max needs --omk-repeat auto" in result.stderr.str()


def test_bad_repeat_value_is_a_usage_error(project: pytest.Pytester, omk_run: OmkRun) -> None:
    result = omk_run("--omk-repeat", "often")
    assert result.ret == 4
    assert "--omk-repeat must be an integer >= 1 or 'auto'" in result.stderr.str()
