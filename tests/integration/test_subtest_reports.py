"""Passing checks are reported in a batch; the reports equal what ``subtests.test`` reports.

:func:`pytest_omk.plugin.compat.report_passed_subtests` builds passing checks' subtest reports without
pytest's per-check context manager (that manager was most of the plugin's cost per check in a large
replay). These runs compare its reports, field for field, with those of the same samples reported
through ``subtests.test`` for every check.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.plugin import subtests as subtests_module
from pytest_omk.plugin.compat import subtests_of
from tests.support import OmkRun, sample, write_sample_set

RECORDER = """
import json, os, pytest

def pytest_runtest_logreport(report):
    if isinstance(report, pytest.SubtestReport):
        with open(os.environ["OMK_SUBTEST_LOG"], "a", encoding="utf-8") as out:
            data = report._to_json()
            for timing in ("start", "stop", "duration"):
                data.pop(timing)
            out.write(json.dumps(data, sort_keys=True, default=str) + "\\n")
"""

# Right-aligned: its padding moves with the width of the number, so the padding goes too.
LATENCY = re.compile(r" +\d+(?:\.\d+)?m?s\b")

CHECKS = [
    {"type": "contains", "value": "hello"},
    {"type": "starts_with", "value": "say"},
    {"type": "contains", "value": "absent"},  # fails between passes: the order must hold
    {"type": "max_length", "value": 100},
]


def _context_manager_for_every_check(item: Any, messages: list[str]) -> None:
    """What the batch replaces: one ``subtests.test`` per passing check."""
    for message in messages:
        with subtests_of(item).test(msg=message):
            pass


def _reports(
    pytester: pytest.Pytester, omk_run: OmkRun, log: Path, *args: str
) -> tuple[list[dict[str, Any]], list[str]]:
    log.unlink(missing_ok=True)
    result = omk_run("--omk-executor", "echo", "-v", "-rA", *args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lines = [line for line in result.outlines if line.startswith(("SUB", "eval-samples.json", "="))]
    lines[-1] = lines[-1].rpartition(" in ")[0]  # the summary line without its time
    # The score table's latency column is a measured time (0ms in one run, 3ms in the next).
    lines = [LATENCY.sub(" <latency>", line) for line in lines]
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()], lines


def test_batched_passing_subtests_equal_the_context_managers_reports(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_sample_set(
        pytester,
        sample("passes", assertions=[CHECKS[0], CHECKS[1], CHECKS[3]]),
        sample("mixed", assertions=CHECKS),
        sample("tripwire", assertions=CHECKS, tripwire=True),
    )
    pytester.makeconftest(RECORDER)
    log = pytester.path / "subtests.jsonl"
    monkeypatch.setenv("OMK_SUBTEST_LOG", str(log))

    batched, batched_lines = _reports(pytester, omk_run, log)
    monkeypatch.setattr(subtests_module, "report_passed_subtests", _context_manager_for_every_check)
    managed, managed_lines = _reports(pytester, omk_run, log)

    assert len(batched) == 3 + 4 + 4
    assert [(r["nodeid"], r["_subtest.context"]["msg"], r["outcome"]) for r in batched][3:7] == [
        ("eval-samples.json::mixed", "assertion 0: contains", "passed"),
        ("eval-samples.json::mixed", "assertion 1: starts_with", "passed"),
        ("eval-samples.json::mixed", "assertion 2: contains", "failed"),
        ("eval-samples.json::mixed", "assertion 3: max_length", "passed"),
    ]
    assert batched == managed
    assert batched_lines == managed_lines
    assert sum("SUBPASSED" in line for line in batched_lines) == 9


@pytest.mark.multiprocess
def test_batched_subtests_travel_from_xdist_workers(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_sample_set(pytester, *(sample(f"s{i}", assertions=[CHECKS[0], CHECKS[1]]) for i in range(4)))
    # Only the controller logs: what it holds came through xdist's serialization of the reports.
    pytester.makeconftest(RECORDER.replace("def pytest_runtest_logreport(report):", CONTROLLER_ONLY))
    log = pytester.path / "subtests.jsonl"
    monkeypatch.setenv("OMK_SUBTEST_LOG", str(log))
    result = omk_run("--omk-executor", "echo", "-n", "2", "-p", "xdist")
    result.assert_outcomes(passed=4)
    received = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert sorted((r["nodeid"], r["_subtest.context"]["msg"], r["outcome"]) for r in received) == [
        (f"eval-samples.json::s{i}", message, "passed")
        for i in range(4)
        for message in ("assertion 0: contains", "assertion 1: starts_with")
    ]


CONTROLLER_ONLY = """
CONFIG = []

def pytest_configure(config):
    CONFIG.append(config)

def pytest_runtest_logreport(report):
    if hasattr(CONFIG[0], "workerinput"):
        return
"""
