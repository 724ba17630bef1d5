"""An app under test, run every time: its answer is never replayed, its model calls are.

``python:`` callables, the app of the ``pytest_omk_make_executor`` hook or of the ``omk_app``
fixture, and ``command:`` scripts are the project's own code: an eval must see a change to it.
:class:`LiveApp` runs such an executor for every sample, with the model gateway's addresses in
``request.model_env`` (a ``command:`` script gets them as its environment), and turns a replay
miss of any of its model calls into the sample's error, even when the app swallowed the HTTP
error and answered anyway. No pytest here.
"""

from __future__ import annotations

from dataclasses import replace

from pytest_omk.errors import ExecutionError, ReplayMissError
from pytest_omk.execute.app_runs import AppRun
from pytest_omk.execute.base import Executor
from pytest_omk.execute.gateway import ModelGateway
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest


class LiveApp:
    """Runs ``app`` for every call; the gateway replays or records what it asks its models."""

    records_answers = False
    """The call path asks no recording for this executor's answer."""

    def __init__(self, app: Executor, gateway: ModelGateway) -> None:
        self.app = app
        self.gateway = gateway

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
        except ExecutionError as exc:
            if run.misses:
                raise ReplayMissError(_missed(run)) from None
            raise exc
        finally:
            self.gateway.runs.close(run)
        if run.misses:
            raise ReplayMissError(_missed(run))
        return result.model_copy(
            update={
                "innerCalls": {"live": run.live, "replayed": run.replayed},
                "replayed": run.live == 0 and run.replayed > 0,
            }
        )

    async def aclose(self) -> None:
        """Close the app's executor (a command's processes)."""
        await self.app.aclose()


def _missed(run: AppRun) -> str:
    first = run.misses[0]
    more = len(run.misses) - 1
    return first + (f"\n({more} more of this sample's model calls had no recording either.)" if more else "")
