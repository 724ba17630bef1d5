"""Building what answers the samples: a built-in executor, or an app under test and its gateway.

:mod:`pytest_omk.plugin.answerer` says *which* source answers; this module builds it. An app (a
``python:`` callable, the hook's, the ``omk_app`` fixture's, a ``command:`` script) gets the model
gateway first, so that it reaches its models through the recordings from its very first import,
and runs live for every sample; the fixture's app is bound when the first sample sets it up.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk.config.settings import Settings
from pytest_omk.errors import ConfigError
from pytest_omk.plugin.answerer import FIXTURE, Answerer, answerer_key, choose
from pytest_omk.plugin.compat import fixture_value, keep_current_test_variable

if TYPE_CHECKING:
    from pytest_omk.agent.options import AgentOptions
    from pytest_omk.app.host import AppGateway, FixtureApp
    from pytest_omk.app.live import LiveApp
    from pytest_omk.execute.base import Executor
    from pytest_omk.execute.budget import Budget
    from pytest_omk.execute.retry import AdaptiveLimiter
    from pytest_omk.models.accounting import CallLedger
    from pytest_omk.recordings.store import RecordingStore


class ModelUnderTest:
    """The model under test of one process: chosen, built once, closed at the end."""

    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        store: Callable[[], RecordingStore],
        agent: Callable[[], AgentOptions],
        budget: Callable[[], Budget | None] = lambda: None,
        limiter: Callable[[], AdaptiveLimiter | None] = lambda: None,
        ledger: CallLedger | None = None,
    ) -> None:
        self.config = config
        self.settings = settings
        self._store = store
        self._budget = budget
        self._limiter = limiter
        self._ledger = ledger
        self._agent = agent
        self.answerer = choose(config)
        config.stash[answerer_key] = self.answerer
        self.app: AppGateway | None = None
        self._fixture: FixtureApp | None = None
        self._live: LiveApp | None = None
        self._undo_environment: Callable[[], None] | None = None

    def build(self) -> Executor | None:
        """Build what answers (once; ``None``: nothing is configured); a bad spec is a usage error."""
        # Asked again now: a conftest collected since the start may hold the hook or the fixture.
        self.answerer = choose(self.config)
        try:
            executor = self._build(self.answerer)
        except ConfigError as exc:
            self.close()
            raise pytest.UsageError(f"omk: {_where(self.answerer)}{exc}") from None
        self.config.stash[answerer_key] = self.answerer
        return executor

    def _build(self, answerer: Answerer) -> Executor | None:
        if answerer.source is None:
            return None
        if answerer.own_code:
            self._start_app(in_process=not _is_command(answerer))
        raw = self._raw(answerer)
        if raw is None:  # the hook returned None: the ini file's executor, if any, answers
            self.answerer = answerer.fallback()
            self.close()
            return self._build(self.answerer) if self.answerer.source else None
        if self.app is None:
            return raw
        self._live = self.app.wrap(raw, answers=self.settings.app_record == "answers")
        if self._live.answers and self._fixture is None:
            self._live.digest = self._digest(raw)
        return self._live

    def _raw(self, answerer: Answerer) -> Executor | None:
        from pytest_omk.execute.pricing import PriceBook
        from pytest_omk.run.executors import callable_name, is_agent_spec, make_executor, wrap_callable

        if answerer.source == "fixture":
            from pytest_omk.app.host import FixtureApp

            self._fixture = FixtureApp(supports_mocks="mocks" in self.settings.executor_capabilities)
            return self._fixture
        if answerer.source == "hook":
            made = self.config.hook.pytest_omk_make_executor(config=self.config)
            return None if made is None else wrap_callable(made, callable_name(made))
        spec = answerer.spec or ""
        return make_executor(
            spec,
            timeout=self.settings.timeout,
            capabilities=self.settings.executor_capabilities,
            agent=self._agent() if is_agent_spec(spec) else None,
            prices=PriceBook(self.settings.prices),
        )

    def _start_app(self, *, in_process: bool) -> None:
        from pytest_omk.app.host import AppGateway
        from pytest_omk.execute.pricing import PriceBook

        self.app = AppGateway(
            self._store(),
            os.environ,
            timeout=self.settings.timeout,
            budget=self._budget(),
            prices=PriceBook(self.settings.prices),
            limiter=self._limiter(),
            ledger=self._ledger,
        )
        self.app.start(in_process=in_process)
        if in_process:  # the app's threads read os.environ while pytest runs items
            self._undo_environment = keep_current_test_variable()

    def _digest(self, raw: Executor) -> Any:
        from pytest_omk.app.digest import app_digest
        from pytest_omk.app.host import app_target

        option = "--omk-app-digest" if self.config.getoption("omk_app_digest", None) else "omk_app_digest"
        return app_digest(
            self.settings.app_digest, rootdir=self.settings.rootdir, app=app_target(raw), option=option
        )

    @property
    def waits_for_fixture(self) -> bool:
        """Whether the app is the ``omk_app`` fixture's and not set up yet (nothing may start)."""
        return self._fixture is not None and not self._fixture.bound

    def bind_fixture(self, item: pytest.Function) -> None:
        """Set up the ``omk_app`` fixture through ``item`` (the first sample to run) and bind it."""
        if self._fixture is None or self._fixture.bound:
            return
        from pytest_omk.run.executors import callable_name, wrap_callable

        value = fixture_value(item, FIXTURE)
        try:
            self._fixture.bind(wrap_callable(value, callable_name(value)))
            if self._live is not None and self._live.answers:
                self._live.digest = self._digest(self._fixture)
        except ConfigError as exc:
            pytest.fail(f"omk: the {FIXTURE} fixture: {exc}", pytrace=False)

    def close(self) -> None:
        """Stop the gateway and put the provider variables back (the calls have ended)."""
        if self.app is not None:
            self.app.stop()
            self.app = None
        undo, self._undo_environment = self._undo_environment, None
        if undo is not None:
            undo()


def _is_command(answerer: Answerer) -> bool:
    return answerer.source in ("command line", "ini") and not (answerer.spec or "").startswith("python:")


def _where(answerer: Answerer) -> str:
    """Which option named what could not be built (the hook and the fixture name themselves)."""
    if answerer.source == "command line":
        return f"--omk-executor {answerer.spec}: "
    if answerer.source == "ini":
        return f"ini key omk_executor {answerer.spec}: "
    return ""
