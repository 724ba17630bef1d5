"""A sample's setup is the features' own ``pytest_runtest_setup`` hooks, in one documented order."""

from __future__ import annotations

import json

import pytest

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
    assert found["wrappers"] == ["omk-judge-recordings", "omk-sample-timeouts"]
