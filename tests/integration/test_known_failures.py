"""End to end: ``--omk-known-failures=xfail`` with ``--omk-baseline`` (issue 51, item 9).

A sample that failed in the baseline and fails again is XFAIL ("failed in the baseline too: ..."),
one that passes now XPASS (not strict); a new failure or a regression still fails the run. Shown in
the terminal, JUnit, the JSON report and the PR section.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import OmkRun, load_report, omk_command, parse_junit, sample, write_sample_set
from tests.support.wrapped import unwrapped

CONFTEST = """
import json, pathlib

HERE = pathlib.Path(__file__).parent


def answer(request):
    return json.loads((HERE / "answers.json").read_text())[request.sample_id]


def pytest_omk_make_executor(config):
    return answer
"""
CHECK = [{"type": "contains", "value": "alpha"}]
GOOD, BAD = "alpha", "gamma"


def project(pytester: pytest.Pytester, answers: dict[str, str]) -> None:
    pytester.makeconftest(CONFTEST)
    write_sample_set(pytester, *(sample(sid, f"question {sid}", assertions=CHECK) for sid in answers))
    (pytester.path / "answers.json").write_text(json.dumps(answers), encoding="utf-8")


def outcomes(path: Path) -> dict[str, str]:
    return {row["sample_id"]: row["outcome"] for row in load_report(path)["samples"]}


def test_known_failures_are_xfail_and_new_ones_still_fail(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    project(pytester, {"a": GOOD, "b": BAD, "c": BAD, "d": GOOD})
    assert omk_run("--omk-report=base.json").ret == pytest.ExitCode.TESTS_FAILED
    # b fails again (known), c passes now, d regressed, e is new and fails.
    project(pytester, {"a": GOOD, "b": BAD, "c": GOOD, "d": BAD, "e": BAD})
    result = omk_run(
        "--omk-baseline=base.json", "--omk-known-failures=xfail", "--omk-report=new.json",
        "--omk-markdown=new.md", "--junitxml=junit.xml", "-rxXf",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert outcomes(pytester.path / "new.json") == {
        "a": "passed", "b": "xfailed", "c": "xpassed", "d": "failed", "e": "failed",
    }  # fmt: skip
    rows = {row["sample_id"]: row for row in load_report(pytester.path / "new.json")["samples"]}
    reason = "failed in the baseline too: assertion 0: contains: expected the output to contain 'alpha'"
    assert rows["b"]["knownFailure"].startswith(reason) and rows["c"]["knownFailure"]
    assert "knownFailure" not in rows["d"] and "knownFailure" not in rows["e"]
    out = result.stdout.str()
    assert f"XFAIL eval-samples.json::b - {reason}" in out
    assert "XPASS eval-samples.json::c" in out
    assert "FAILED eval-samples.json::d" in out and "FAILED eval-samples.json::e" in out
    assert "omk known failures (--omk-known-failures=xfail, baseline base.json): 1 failed again (xfail), " \
        "1 pass now (xpass)" in unwrapped(result).lines  # the whole line, wrapped or not  # fmt: skip
    cases = parse_junit(pytester.path / "junit.xml").cases
    assert any(reason in text for text in cases["eval-samples.json::b"].skipped)
    assert not cases["eval-samples.json::b"].failures and cases["eval-samples.json::d"].failures
    markdown = (pytester.path / "new.md").read_text(encoding="utf-8")
    section = markdown[markdown.index("### Against the baseline") :]
    newly_failing = section[section.index("**Newly failing") : section.index("**Newly passing")]
    assert "eval-samples.json::d" in newly_failing and "::b" not in newly_failing
    assert (
        "Known failures (failed in the baseline too, reported as xfail): 1 failed again, 1 pass now"
        in section
    )
    # render counts again from the records and agrees (a known failure stays xfailed).
    rendered = omk_command(pytester.path, "render", "new.json", "--markdown", "again.md")
    assert rendered.returncode == 0, rendered.stderr
    head = (pytester.path / "again.md").read_text(encoding="utf-8").splitlines()[0]
    assert "2 failed" in head and "1 xfailed" in head and "1 xpassed" in head, head


@pytest.mark.parametrize(
    "workers",
    [
        pytest.param([], id="one process"),
        pytest.param(["-n", "2"], id="xdist", marks=pytest.mark.multiprocess),
    ],
)
def test_only_known_failures_failing_keeps_the_run_green(
    pytester: pytest.Pytester, omk_run: OmkRun, workers: list[str]
) -> None:
    project(pytester, {"a": GOOD, "b": BAD, "c": BAD})
    assert omk_run("--omk-report=base.json").ret == pytest.ExitCode.TESTS_FAILED
    result = omk_run(
        "--omk-baseline=base.json", "--omk-known-failures=xfail", "--omk-report=new.json", *workers
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert outcomes(pytester.path / "new.json") == {"a": "passed", "b": "xfailed", "c": "xfailed"}
    # Off (the default): the same failures fail the run.
    assert omk_run("--omk-baseline=base.json").ret == pytest.ExitCode.TESTS_FAILED


def test_known_failures_need_a_baseline(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    project(pytester, {"a": GOOD})
    result = omk_run("--omk-known-failures=xfail")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--omk-known-failures=xfail needs --omk-baseline" in result.stderr.str()
    bad = omk_run("--omk-known-failures=maybe", "--omk-baseline=x.json")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR and "one of off, xfail" in bad.stderr.str()


def test_a_carried_known_failure_is_xfailed_too(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    """--omk-changed carries a sample whose inputs did not change: a known failure stays one."""
    project(pytester, {"a": GOOD, "b": BAD})
    assert omk_run("--omk-report=base.json").ret == pytest.ExitCode.TESTS_FAILED
    assert omk_run("--omk-baseline=base.json", "--omk-changed").ret == pytest.ExitCode.TESTS_FAILED
    result = omk_run(
        "--omk-baseline=base.json", "--omk-changed", "--omk-known-failures=xfail", "--omk-report=new.json"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    rows = {row["sample_id"]: row for row in load_report(pytester.path / "new.json")["samples"]}
    assert rows["b"]["carried"] and rows["b"]["outcome"] == "xfailed"
    assert rows["b"]["knownFailure"].startswith("failed in the baseline too: assertion 0: contains")
