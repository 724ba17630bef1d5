"""Building what answers the samples: a built-in executor, or an app under test and its gateway.

Which source answers is chosen by the pytest layer (:mod:`pytest_omk.plugin.answerer`); this
module builds it from what that layer hands in (:class:`AppSide`). An app (a ``python:`` callable,
the hook's, the ``omk_app`` fixture's, a ``command:`` script) gets the model gateway first, so that
it reaches its models through the recordings from its very first import, and runs live for every
sample; the fixture's app is bound when the first sample sets the fixture up.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_omk.config.settings import Settings
from pytest_omk.errors import ConfigError
from pytest_omk.execute.pricing import PriceBook
from pytest_omk.run.answerer import Answerer

if TYPE_CHECKING:
    from pytest_omk.agent.options import AgentOptions
    from pytest_omk.app.host import AppGateway, FixtureApp
    from pytest_omk.app.live import LiveApp
    from pytest_omk.execute.base import Executor
    from pytest_omk.execute.budget import Budget
    from pytest_omk.execute.retry import AdaptiveLimiter
    from pytest_omk.models.accounting import CallLedger
    from pytest_omk.recordings.store import RecordingStore


@dataclass(frozen=True)
class AppSide:
    """What only the test runner knows about who answers: handed in by the pytest layer."""

    choose: Callable[[], Answerer]
    """Rank what is configured now (a conftest collected since the start may add the hook)."""
    from_hook: Callable[[], Any]
    """Call the ``pytest_omk_make_executor`` hook: its executor or callable, or ``None``."""
    keep_environment: Callable[[], Callable[[], None]]
    """Keep the runner from deleting variables an in-process app reads; returns the undo."""
    digest_option: Callable[[], str]
    """How the user named the app digest (the option or the ini key), for its errors."""
    settled: Callable[[Answerer], None] = lambda answerer: None
    """Told what answers once it is chosen, and again once it is built (the run header says it)."""


class ModelUnderTest:
    """The model under test of one process: chosen, built once, closed at the end."""

    def __init__(
        self,
        settings: Settings,
        side: AppSide,
        store: Callable[[], RecordingStore],
        agent: Callable[[], AgentOptions],
        budget: Callable[[], Budget | None] = lambda: None,
        limiter: Callable[[], AdaptiveLimiter | None] = lambda: None,
        ledger: CallLedger | None = None,
    ) -> None:
        self.settings = settings
        self._side = side
        self._store = store
        self._budget = budget
        self._limiter = limiter
        self._ledger = ledger
        self._agent = agent
        self.answerer = side.choose()
        side.settled(self.answerer)
        self.app: AppGateway | None = None
        self._fixture: FixtureApp | None = None
        self._live: LiveApp | None = None
        self._undo_environment: Callable[[], None] | None = None

    def build(self) -> Executor | None:
        """Build what answers (``None``: nothing is configured); a bad spec raises ``ConfigError``
        naming where it was given."""
        self.answerer = self._side.choose()
        try:
            executor = self._build(self.answerer)
        except ConfigError as exc:
            self.close()
            raise ConfigError(f"{_where(self.answerer)}{exc}") from None
        self._side.settled(self.answerer)
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
        # Imported on first build: the executors' modules (pydantic, asyncio) are no part of a
        # run without sample files, which makes this object as pytest configures.
        from pytest_omk.run.executors import callable_name, is_agent_spec, make_executor, wrap_callable

        if answerer.source == "fixture":
            from pytest_omk.app.host import FixtureApp

            self._fixture = FixtureApp(supports_mocks="mocks" in self.settings.executor_capabilities)
            return self._fixture
        if answerer.source == "hook":
            made = self._side.from_hook()
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
        if in_process:  # the app's threads read os.environ while the runner runs items
            self._undo_environment = self._side.keep_environment()

    def _digest(self, raw: Executor) -> Any:
        from pytest_omk.app.digest import app_digest
        from pytest_omk.app.host import app_target

        return app_digest(
            self.settings.app_digest,
            rootdir=self.settings.rootdir,
            app=app_target(raw),
            option=self._side.digest_option(),
        )

    @property
    def waits_for_fixture(self) -> bool:
        """Whether the app is the ``omk_app`` fixture's and not set up yet (nothing may start)."""
        return self._fixture is not None and not self._fixture.bound

    def bind_fixture(self, value: Any) -> None:
        """Bind the ``omk_app`` fixture's ``value`` (set up by the first sample that runs);
        ``ConfigError`` when it is neither an executor nor a callable."""
        if self._fixture is None or self._fixture.bound:
            return
        from pytest_omk.run.executors import callable_name, wrap_callable

        self._fixture.bind(wrap_callable(value, callable_name(value)))
        if self._live is not None and self._live.answers:
            self._live.digest = self._digest(self._fixture)

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
