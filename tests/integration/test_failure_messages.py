"""Failure texts: the failed checks by name (JUnit), once per line under ``--tb=line``, and
per-sample JUnit properties at suite level for strict validators."""

from __future__ import annotations

import pytest

from tests.support import OmkRun, parse_junit, sample, write_sample_set

CHECKS = [
    {"type": "contains", "value": "zzz"},
    {"type": "contains", "value": "hello"},
    {"type": "starts_with", "value": "no"},
]


@pytest.fixture
def failing(pytester: pytest.Pytester) -> None:
    write_sample_set(pytester, sample("s1", "hello", assertions=CHECKS), sample("ok", "hello"))


@pytest.mark.usefixtures("failing")
def test_the_junit_failure_message_lists_the_failed_checks(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    omk_run("--omk-executor=echo", "--junitxml", "j.xml")
    case = parse_junit(pytester.path / "j.xml").cases["eval-samples.json::s1"]
    assert (
        case.failures[-1]
        == "2 of 3 checks failed: assertion 0: contains, assertion 2: starts_with (composite 2.00)"
    )


@pytest.mark.usefixtures("failing")
def test_tb_line_prints_each_message_once(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    result = omk_run("--omk-executor=echo", "--tb=line")
    text = result.stdout.str()
    assert text.count("expected the output to contain 'zzz'") == 1
    assert text.count("2 of 3 checks failed: assertion 0") == 2  # the failure line and the short summary
    result.stdout.fnmatch_lines(["*eval-samples.json:8: expected the output to contain 'zzz'*"])


@pytest.mark.usefixtures("failing")
@pytest.mark.parametrize("workers", [[], pytest.param(["-n", "2"], marks=pytest.mark.multiprocess)])
def test_suite_level_junit_properties(pytester: pytest.Pytester, omk_run: OmkRun, workers: list[str]) -> None:
    pytest.importorskip("xdist")
    pytester.makeini("[pytest]\nomk_junit_properties = suite\njunit_family = xunit2\n")
    omk_run("--omk-executor=echo", "--junitxml", "j.xml", *workers)
    junit = parse_junit(pytester.path / "j.xml")
    assert all(case.properties == [] for case in junit.cases.values())
    assert junit.suite_properties["eval-samples.json::s1::omk.score.composite"] == "2.00"
    assert junit.suite_properties["eval-samples.json::ok::omk.sample_id"] == "ok"
    assert junit.suite_properties["omk.samples"] == "2"


def test_an_unknown_junit_properties_value_is_a_usage_error(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    pytester.makeini("[pytest]\nomk_junit_properties = everywhere\n")
    result = omk_run("--omk-executor=echo")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini key omk_junit_properties must be one of auto, testcase, suite, not 'everywhere'*"]
    )
