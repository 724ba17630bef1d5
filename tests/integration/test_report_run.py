"""The JSON report's run-level fields, and a report even from a run that fails to collect."""

from __future__ import annotations

import platform

import pytest

from pytest_omk import __version__
from tests.support import OmkRun, load_report, sample, write_sample_set, write_samples


def test_the_report_carries_exit_status_timing_environment_and_other_tests(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_sample_set(pytester, sample("s1", "hello", assertions=[{"type": "contains", "value": "hello"}]))
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n\ndef test_bad():\n    assert False\n")
    result = omk_run("--omk-executor=echo", "--omk-report", "r.json")
    result.assert_outcomes(passed=2, failed=1)
    report = load_report(pytester.path / "r.json")
    assert report["exitStatus"] == 1
    assert report["startedAt"].endswith("+00:00")
    assert report["durationS"] >= 0
    env = report["environment"]
    assert (env["python"], env["pytest"], env["plugin"]) == (
        platform.python_version(),
        pytest.__version__,
        __version__,
    )
    assert set(env["dependencies"]) >= {"pydantic", "httpx", "mcp", "jsonschema", "pyyaml", "sacrebleu"}
    assert report["collectionErrors"] == []
    assert report["otherTests"] == {"total": 2, "failed": 1, "passed": 1}
    assert report["summary"]["samples"] == 1


def test_a_run_that_fails_to_collect_still_writes_the_report(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_samples(pytester, "eval-samples.json", '{"schemaVersion": "omk.eval-sample-set/v2", "samples": [}')
    result = omk_run("--omk-executor=echo", "--omk-report", "r.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    report = load_report(pytester.path / "r.json")
    assert report["exitStatus"] == 2
    assert [e["nodeid"] for e in report["collectionErrors"]] == ["eval-samples.json"]
    assert "eval-samples.json" in report["collectionErrors"][0]["message"]
    assert report["samples"] == []
    assert report["otherTests"] == {"total": 0}
