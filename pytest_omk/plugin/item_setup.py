"""A sample's setup: each feature takes its step in its own plugin object's ``pytest_runtest_setup``
hook, in the order registered here, and the session waits for the item's runs last.

The steps run after pytest's own setup of the item (``trylast``: its fixtures can be set up), and
pluggy calls ``trylast`` implementations in the order they were registered: the ``omk_app``
fixture's app, the record, the input digest, ``requires``, the rerun's take, and last the session's
wait for the model calls (:class:`SetupWait`). What the wait may end in besides the runs is for the
features' wrappers around the steps (pluggy calls the last registered first, so it ends last): the
ignored judge recordings once every step succeeded, pytest-timeout's limit over the wait
(:mod:`.sample_timeouts`), the calls made noted in the record whatever
happened, a budget refusal made a skip; the session's own :class:`SetupRelease` ends last.

A feature's change touches its module and its line here; the setup returns to the session twice.
``tests/unit/plugin/test_item_setup.py`` pins the order.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

import pytest

from pytest_omk.plugin.budget import BudgetSkip
from pytest_omk.plugin.call_accounting import CallAccounting
from pytest_omk.plugin.fixture_app import FixtureAppSetup
from pytest_omk.plugin.item_records import IgnoredJudgeRecordings
from pytest_omk.plugin.sample_timeouts import SampleTimeouts

if TYPE_CHECKING:
    from pytest_omk.plugin.session import OmkSession


def register_item_setup(config: pytest.Config, session: OmkSession) -> None:
    """Register the plugin objects of a sample's setup, steps then wrappers, in their order."""
    register = config.pluginmanager.register
    register(FixtureAppSetup(session.calls, session.requires.runs, session.fixture_bound), "omk-fixture-app")
    register(session.reports, "omk-item-reports")
    register(session.carry, "omk-changed-digest")
    register(session.requires, "omk-requires")
    register(session.attempts, "omk-reruns")
    register(SetupWait(session), "omk-setup-wait")
    # The wrappers, innermost first.
    register(IgnoredJudgeRecordings(session.calls), "omk-judge-recordings")
    timeouts = SampleTimeouts()
    session.bound_wait = timeouts.bound  # pytest-timeout's limit over the wait
    register(timeouts, SampleTimeouts.NAME)
    register(CallAccounting(session.launcher.taken_calls), "omk-call-accounting")
    register(BudgetSkip(), "omk-budget-skip")
    register(SetupRelease(session), "omk-setup-release")


class SetupWait:
    """``omk-setup-wait``: the session's step in a sample's setup, after every feature's."""

    def __init__(self, session: OmkSession) -> None:
        self._session = session

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Wait for the sample's model calls (registered last: pluggy calls it after the others)."""
        self._session.setup_item(item)


class SetupRelease:
    """``omk-setup-release``: the session's wrapper around a sample's setup, outside every feature's."""

    def __init__(self, session: OmkSession) -> None:
        self._session = session

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        """After the steps and the features' wrappers, whatever their outcome: the session drops
        what the wrappers read (the calls' log of the item's sample)."""
        try:
            return (yield)
        finally:
            self._session.release(item)
