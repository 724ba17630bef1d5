"""A sample's setup is the features' own ``pytest_runtest_setup`` hooks, in one documented order
(``pytest_omk.plugin.item_setup``), and the session calls no feature by name."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import pytest_omk.plugin.session
from pytest_omk.models.accounting import CallLog, CallRecord
from pytest_omk.plugin.call_accounting import CallAccounting
from tests.support import run_pytest

CONFTEST = """
import json

def pytest_collection_finish(session):
    manager = session.config.pluginmanager
    impls = manager.hook.pytest_runtest_setup.get_hookimpls()
    # pluggy calls a hook's implementations from the end of this list.
    steps = [manager.get_name(i.plugin) for i in reversed(impls) if not (i.wrapper or i.hookwrapper)]
    wrappers = [manager.get_name(i.plugin) for i in impls if i.wrapper or i.hookwrapper]
    with open("setup.json", "w") as out:
        json.dump({"steps": [s for s in steps if s.startswith("omk-") or s == "runner"],
                   "wrappers": [w for w in wrappers if w.startswith("omk-")]}, out)
"""


def test_the_features_set_a_sample_up_in_order_and_the_session_waits_last(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    run_pytest(pytester, "--omk-executor", "echo").assert_outcomes(passed=1)
    found = json.loads((pytester.path / "setup.json").read_text())
    assert found["steps"] == [
        "runner",  # pytest's own setup of the item first: its fixtures can be set up
        "omk-fixture-app",
        "omk-item-reports",
        "omk-changed-digest",
        "omk-requires",
        "omk-reruns",
        "omk-setup-wait",
    ]
    # Innermost first: the calls are noted before a refusal becomes a skip, and the session drops
    # the calls' log only once every feature's wrapper has read it.
    assert found["wrappers"] == [
        "omk-judge-recordings",
        "omk-sample-timeouts",
        "omk-call-accounting",
        "omk-budget-skip",
        "omk-setup-release",
    ]


FEATURE_MODULES = {
    "pytest_omk.plugin.auto_repeat",
    "pytest_omk.plugin.budget",
    "pytest_omk.plugin.call_accounting",
    "pytest_omk.plugin.sample_timeouts",
    "pytest_omk.plugin.subtests",  # the grading of items; the session's lazy error line excepted
    "pytest_omk.grade.sequential",
    "pytest_omk.execute.budget",
}
FEATURE_NAMES = {
    "BudgetExhausted",
    "StopRule",
    "repeat_auto",
    "run_grader",
    "note_calls",
    "budget",
    "grading",
    "IgnoredJudgeRecordings",
    "judge_recordings",
    "AutoRepeat",
    "BudgetSkip",
    "CallAccounting",
    "SampleTimeouts",
    "within_time_limit",
}
"""What the session named before the features hooked in (issue 50), and the features' objects: it
names none of them now."""


def _names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The modules ``tree`` imports (with the names taken from them) and every name it uses."""
    modules: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return modules, names


def test_the_session_names_no_feature_of_an_item_s_setup() -> None:
    source = Path(pytest_omk.plugin.session.__file__).read_text(encoding="utf-8")
    modules, names = _names(ast.parse(source))
    # The one import of subtests is the error line of an infrastructure failure, the session's own.
    assert modules & FEATURE_MODULES <= {"pytest_omk.plugin.subtests"}
    assert "run_grader" not in names and "grade_and_report" in names  # the call phase is the session's
    assert names & FEATURE_NAMES == set()


def test_the_checker_sees_a_feature_named_in_the_session() -> None:
    planted = "from pytest_omk.errors import BudgetExhausted\nauto = settings.repeat_auto\n"
    modules, names = _names(ast.parse(planted))
    assert "pytest_omk.errors" in modules and {"BudgetExhausted", "repeat_auto"} <= names & FEATURE_NAMES


def _log(*records: CallRecord) -> CallLog:
    log = CallLog()
    for record in records:
        log.add(record)
    return log


def test_a_rerun_s_record_counts_the_calls_of_the_attempts_before_it() -> None:
    accounting = CallAccounting(lambda nodeid: None)
    first, second = CallRecord("model", "m"), CallRecord("model", "m", replayed=True)
    assert accounting.calls("a", _log(first)).records == (first,)
    assert accounting.calls("a", _log(second)).records == (first, second)
    # Another item's calls start afresh; the earlier item's are not carried over to it.
    assert accounting.calls("b", _log(second)).records == (second,)
