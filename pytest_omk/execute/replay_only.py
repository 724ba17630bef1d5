"""Replay-only runs hold no transport: ``--omk-record-mode=none`` cannot reach a model.

In ``none`` mode the session hands the call path a :class:`ReplayOnly` stand-in instead of the
configured executor. It carries what the recording key needs (the executor id, its endpoint, its
mock support) and nothing that can send a request: no HTTP client is ever opened, no command is
ever started. A miss is therefore an error by construction, not by a check that could be skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_omk.errors import ReplayMissError
from pytest_omk.execute.base import Endpoint, ExecutionRequest, Executor, ExecutorDefaults
from pytest_omk.models.results import ExecutionResult


class ReplayOnly(ExecutorDefaults):
    """Stands in for an executor whose calls may only be replayed."""

    def __init__(self, executor: Executor) -> None:
        self._id: str = executor.id
        self.supports_mocks: bool = bool(executor.supports_mocks)
        # Only the endpoint's URL is kept (for the key): the headers and key stay behind.
        endpoint = executor.api_endpoint
        self._endpoint = None if endpoint is None else _UrlOnly(endpoint.url)
        self._budget = executor.time_budget
        self._answer_identity = executor.answer_identity

    @property
    def id(self) -> str:
        """The replaced executor's id, so that keys are the same as when it records."""
        return self._id

    @property
    def api_endpoint(self) -> Endpoint | None:
        """The replaced executor's endpoint URL (for the key), without its headers or key."""
        return self._endpoint

    @property
    def time_budget(self) -> float | None:
        """The replaced executor's bound of one call."""
        return self._budget

    @property
    def answer_identity(self) -> Mapping[str, Any] | None:
        """The replaced executor's extra key part (an app's digest), so that keys are the same."""
        return self._answer_identity

    def __repr__(self) -> str:
        return f"ReplayOnly({self._id!r})"

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """Never answers: the store only gets here when nothing was recorded."""
        raise ReplayMissError(
            f"sample {request.sample_id!r}: --omk-record-mode=none replays only, and no recording matched"
        )

    async def aclose(self) -> None:
        """Nothing to close: nothing was opened."""


class _UrlOnly:
    """An endpoint reduced to its URL."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.missing_key: str | None = None  # replaying needs no key
