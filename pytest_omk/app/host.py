"""An app under test in this process: its model gateway, the provider variables, its executor.

A ``python:`` callable, the hook's or the fixture's app, or a ``command:`` script is the project's
own code: it runs for every sample (:class:`~pytest_omk.app.live.LiveApp`), and the model
calls it makes go through this process's :class:`~pytest_omk.app.gateway.ModelGateway`.
:class:`AppGateway` starts the gateway before the app is imported or built (a client made at
import time reads ``OPENAI_BASE_URL`` then), points this process's provider variables at it for
in-process apps, and puts them back when the run ends. :class:`FixtureApp` stands for the app the
``omk_app`` fixture provides until the fixture is set up.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from pytest_omk.app.gateway import ModelGateway, upstreams_from
from pytest_omk.app.keys import placeholder_keys
from pytest_omk.app.live import LiveApp
from pytest_omk.errors import ExecutionError
from pytest_omk.execute.base import Executor, ExecutorDefaults
from pytest_omk.execute.budget import Budget
from pytest_omk.execute.local import CallableExecutor
from pytest_omk.execute.pricing import PriceBook
from pytest_omk.execute.retry import AdaptiveLimiter
from pytest_omk.models.accounting import CallLedger
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.store import RecordingStore


class AppGateway:
    """The model gateway of this process's app under test, and the variables that lead to it."""

    def __init__(
        self,
        store: RecordingStore,
        environ: MutableMapping[str, str],
        *,
        timeout: float,
        budget: Budget | None = None,
        prices: PriceBook | None = None,
        limiter: AdaptiveLimiter | None = None,
        ledger: CallLedger | None = None,
    ) -> None:
        self._environ = environ
        # In every mode: a replay needs no key but an SDK wants one; a live call refuses it.
        keys = placeholder_keys(environ)
        # The providers as configured before the run: where live calls go on to.
        self.gateway = ModelGateway(
            store, upstreams_from(environ), timeout=timeout, keys=keys, budget=budget, prices=prices,
            limiter=limiter, ledger=ledger,
        )  # fmt: skip
        self._saved: dict[str, str | None] | None = None

    def start(self, *, in_process: bool) -> None:
        """Listen; for an app in this process, point ``OPENAI_BASE_URL`` and friends here too."""
        self.gateway.start()
        if in_process:
            values = self.gateway.env()
            self._saved = {name: self._environ.get(name) for name in values}
            self._environ.update(values)

    def wrap(self, app: Executor, *, answers: bool) -> LiveApp:
        """``app`` run live, its model calls through the gateway (whole answers too with ``answers``)."""
        return LiveApp(app, self.gateway, answers=answers)

    def stop(self) -> None:
        """Put the variables back and stop the gateway."""
        saved, self._saved = self._saved, None
        for name, value in (saved or {}).items():
            if value is None:
                self._environ.pop(name, None)
            else:
                self._environ[name] = value
        self.gateway.stop()


class FixtureApp(ExecutorDefaults):
    """The app the ``omk_app`` fixture provides, bound when the fixture has been set up."""

    def __init__(self, *, supports_mocks: bool = False) -> None:
        self._app: Executor | None = None
        self._supports_mocks = supports_mocks

    @property
    def bound(self) -> bool:
        """Whether the fixture has been set up."""
        return self._app is not None

    def bind(self, app: Executor) -> None:
        """The fixture's value, made an executor."""
        self._app = app

    @property
    def id(self) -> str:
        """The bound app's id (``python:conftest:omk_app.<locals>.answer``)."""
        return self._app.id if self._app is not None else "fixture:omk_app"

    @property
    def supports_mocks(self) -> bool:
        """Declared with ``omk_executor_capabilities = mocks`` (known before the fixture runs)."""
        return self._supports_mocks or (self._app is not None and self._app.supports_mocks)

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """Answer with the bound app."""
        if self._app is None:
            raise ExecutionError("the omk_app fixture has not been set up")
        return await self._app.execute(request)

    async def aclose(self) -> None:
        """Close the bound app."""
        if self._app is not None:
            await self._app.aclose()

    @property
    def target(self) -> Any:
        """What the fixture returned (for the app's digest)."""
        return app_target(self._app) if self._app is not None else None


def app_target(executor: Executor) -> Any:
    """The user's object behind an executor (its module is the app's default digest), or ``None``
    for a command, whose sources must be declared."""
    if isinstance(executor, FixtureApp):
        return executor.target
    if isinstance(executor, CallableExecutor):
        return executor.func
    if type(executor).__module__.startswith("pytest_omk."):
        return None  # a command, echo ...: none of the user's code to read
    return executor
