"""The executor contract: one request in, one :class:`ExecutionResult` out.

Executors are asynchronous so that many model calls can be in flight at once. They raise
:class:`TransientError` for failures worth retrying (HTTP 429/5xx, timeouts, dropped
connections) and :class:`~pytest_omk.errors.ExecutionError` for everything else. Retries,
concurrency limits, timing and recordings are applied around them by the call pipeline, so an
executor only speaks its protocol.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pytest_omk.errors import ExecutionError
from pytest_omk.models.results import ExecutionResult

# The request is a run's data (models.run); named here too as part of the executor contract.
from pytest_omk.models.run import ExecutionRequest as ExecutionRequest
from pytest_omk.models.run import Purpose as Purpose


class TransientError(ExecutionError):
    """A failure that may succeed when retried; ``retry_after`` is the server's hint in seconds."""

    def __init__(self, message: str, *, retry_after: float | None = None, rate_limited: bool = False):
        super().__init__(message)
        self.retry_after = retry_after
        self.rate_limited = rate_limited


@runtime_checkable
class Executor(Protocol):
    """Anything that can answer an :class:`ExecutionRequest`."""

    @property
    def id(self) -> str:
        """Stable identity, part of the recording key (``openai``, ``command:./run.sh`` ...)."""
        ...

    @property
    def supports_mocks(self) -> bool:
        """Whether the executor intercepts tool calls with the sample's mocks."""
        ...

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """Answer ``request`` or raise :class:`TransientError` / ``ExecutionError``."""
        ...

    async def aclose(self) -> None:
        """Release connections and processes."""
        ...
