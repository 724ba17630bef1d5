"""An app under test, run every time: its answer is never replayed, its model calls are.

``python:`` callables, the app of the ``pytest_omk_make_executor`` hook or of the ``omk_app``
fixture, and ``command:`` scripts are the project's own code: an eval must see a change to it.
:class:`LiveApp` runs such an executor for every sample, with the model gateway's addresses in
``request.model_env`` (a ``command:`` script gets them as its environment), and turns a replay
miss of any of its model calls into the sample's error, even when the app swallowed the HTTP
error and answered anyway. No pytest here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pytest_omk.app.digest import AppDigest
from pytest_omk.app.gateway import ModelGateway
from pytest_omk.app.runs import AppRun
from pytest_omk.errors import BudgetExhausted, ExecutionError, ReplayMissError
from pytest_omk.execute.base import Executor, ExecutorDefaults
from pytest_omk.models.results import AppCalls, ExecutionResult
from pytest_omk.models.run import ExecutionRequest


class LiveApp(ExecutorDefaults):
    """Runs ``app`` for every call; the gateway replays or records what it asks its models.

    With ``answers`` (``--omk-app-record answers``, an opt-in for slow apps) the app's whole answers
    are recorded too, keyed by ``digest`` (set before the first call): the app then runs only when
    its answer is not recorded for this version of it.
    """

    def __init__(self, app: Executor, gateway: ModelGateway, *, answers: bool = False) -> None:
        self.app = app
        self.gateway = gateway
        self.answers = answers
        self.digest: AppDigest | None = None
        """What the app is (its declared sources or version), for whole-answer recording."""

    @property
    def records_answers(self) -> bool:
        """Only with ``answers``: otherwise the app runs for every call."""
        return self.answers

    @property
    def answer_identity(self) -> Mapping[str, Any] | None:
        """The app's digest, part of a whole answer's key (a new version of the app is a miss)."""
        if not self.answers:
            return None
        if self.digest is None:
            raise ExecutionError("the app's digest is not known yet (no answer can be recorded)")
        return self.digest.identity()

    @property
    def time_budget(self) -> float | None:
        """The app's own bound of one call."""
        return self.app.time_budget

    @property
    def secrets(self) -> tuple[str, ...]:
        """The app's secrets, and the gateway's (in its base URL, so in an app's HTTP errors)."""
        return (*self.app.secrets, self.gateway.secret)

    @property
    def id(self) -> str:
        """The app's own id (``python:myapp.adapter:answer``, ``command:...``)."""
        return self.app.id

    @property
    def supports_mocks(self) -> bool:
        """Whether the app honours the sample's mocks."""
        return self.app.supports_mocks

    def __repr__(self) -> str:
        return f"LiveApp({self.app.id!r})"

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """Run the app once; its result carries the count of its model calls live and replayed."""
        run = self.gateway.runs.open(request)
        try:
            result = await self.app.execute(replace(request, model_env=self.gateway.env(run)))
        except ExecutionError:
            if run.errors:
                raise ExecutionError(run.errors[0]) from None
            if run.refused:
                raise BudgetExhausted(run.refused[0]) from None
            if run.misses:
                raise ReplayMissError(_missed(run)) from None
            raise
        finally:
            self.gateway.runs.close(run)
        if run.errors:  # the app may have answered anyway: its calls did not all get through
            raise ExecutionError(run.errors[0])
        if run.refused:  # the app may have answered anyway: the budget stopped its sample
            raise BudgetExhausted(run.refused[0])
        if run.misses:
            raise ReplayMissError(_missed(run))
        if self.answers:
            return result  # its whole answer is the recorded call, counted as any executor's
        calls = AppCalls(live=run.live, replayed=run.replayed)
        return result.model_copy(update={"appCalls": calls, "replayed": run.live == 0 and run.replayed > 0})

    async def aclose(self) -> None:
        """Close the app's executor (a command's processes)."""
        await self.app.aclose()


def _missed(run: AppRun) -> str:
    first = run.misses[0]
    more = len(run.misses) - 1
    return first + (f"\n({more} more of this sample's model calls had no recording either.)" if more else "")
