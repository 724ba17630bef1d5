"""The ``omk_app`` fixture's app: set up through the first sample that runs, then bound.

One plugin object (``omk-fixture-app``). Until the fixture's app exists no sample's calls may
start, so the session holds them back; once this object has bound the app it tells the session,
which starts them.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_omk.errors import ConfigError
from pytest_omk.plugin.answerer import FIXTURE
from pytest_omk.plugin.compat import fixture_value
from pytest_omk.plugin.nodes import SampleItem
from pytest_omk.run.compose import CallPath


class FixtureAppSetup:
    """Binds the fixture's app in the setup of the first sample that will run."""

    def __init__(
        self, calls: CallPath, runs: Callable[[SampleItem], bool], bound: Callable[[], None]
    ) -> None:
        """``runs``: whether a sample will run (one to be skipped sets nothing up); ``bound``: told
        once the app is bound."""
        self._calls = calls
        self._runs = runs
        self._bound = bound

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """After pytest's own setup of the item (its fixtures can be set up), before its record."""
        if isinstance(item, SampleItem) and self._calls.model.waits_for_fixture and self._runs(item):
            bind_fixture_app(item, self._calls)
            self._bound()


def bind_fixture_app(item: pytest.Function, calls: CallPath) -> None:
    """Set up the ``omk_app`` fixture through ``item`` and bind its app (a bad value FAILs it)."""
    value = fixture_value(item, FIXTURE)
    try:
        calls.model.bind_fixture(value)
    except ConfigError as exc:
        pytest.fail(f"omk: the {FIXTURE} fixture: {exc}", pytrace=False)
