"""The executor contract: one request in, one :class:`ExecutionResult` out.

Executors are asynchronous so that many model calls can be in flight at once. They raise
:class:`TransientError` for failures worth retrying (HTTP 429/5xx, timeouts, dropped
connections) and :class:`~pytest_omk.errors.ExecutionError` for everything else. Retries,
concurrency limits, timing and recordings are applied around them by the call pipeline, so an
executor only speaks its protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from pytest_omk.errors import ExecutionError
from pytest_omk.execute.tls import SharedTls
from pytest_omk.models.results import ExecutionResult

# The request is a run's data (models.run); named here too as part of the executor contract.
from pytest_omk.models.run import ExecutionRequest as ExecutionRequest
from pytest_omk.models.run import Purpose as Purpose


class TransientError(ExecutionError):
    """A failure that may succeed when retried; ``retry_after`` is the server's hint in seconds.

    ``rate_limited`` (a 429) and ``timed_out`` (no answer within the per-call timeout) are
    congestion: the provider has more calls than it serves in time, so the run lowers its
    concurrency (:mod:`pytest_omk.execute.retry`).
    """

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        rate_limited: bool = False,
        timed_out: bool = False,
    ):
        super().__init__(message)
        self.retry_after = retry_after
        self.rate_limited = rate_limited
        self.timed_out = timed_out

    @property
    def congestion(self) -> bool:
        """Whether the failure says the provider is given more calls than it can serve in time."""
        return self.rate_limited or self.timed_out


class Endpoint(Protocol):
    """The HTTP endpoint an executor calls (what the call path needs to know of it)."""

    @property
    def url(self) -> str:
        """The provider URL; its scheme, host, port and path are part of the recording key."""
        ...

    @property
    def missing_key(self) -> str | None:
        """The usage error of a live call when a required API key is absent, else ``None``."""
        ...


@runtime_checkable
class AnsweringExecutor(Protocol):
    """What an executor object handed to the plugin must have (``python:`` or the hook may give
    one): it answers and closes. :class:`AdaptedExecutor` gives it the optional abilities."""

    @property
    def id(self) -> str:
        """Stable identity, part of the recording key."""
        ...

    @property
    def supports_mocks(self) -> bool:
        """Whether the executor intercepts tool calls with the sample's mocks."""
        ...

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """Answer ``request``."""
        ...

    async def aclose(self) -> None:
        """Release connections and processes."""
        ...


@runtime_checkable
class Executor(AnsweringExecutor, Protocol):
    """Anything that can answer an :class:`ExecutionRequest` (``id``, ``supports_mocks``,
    ``execute`` raising :class:`TransientError` / ``ExecutionError``, ``aclose``).

    Besides answering, an executor declares its optional abilities here, so that the call path asks
    them directly instead of probing for attributes; :class:`ExecutorDefaults` gives the answers of
    an executor that has none of them.
    """

    @property
    def api_endpoint(self) -> Endpoint | None:
        """The HTTP endpoint the calls go to (part of the recording key); ``None`` for executors that
        call no HTTP API (commands, Python callables)."""
        ...

    @property
    def time_budget(self) -> float | None:
        """How long one whole call may take when that is longer than the run's per-call timeout
        (an agent's many turns and tools); ``None``: the per-call timeout."""
        ...

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values the executor holds (tokens of the servers it talks to) that no sink may show."""
        ...

    def share_tls(self, tls: SharedTls) -> None:
        """Use the run's one TLS context for the HTTP clients it builds (a no-op without any)."""
        ...

    async def warm(self) -> None:
        """Open its HTTP client ahead of the first call (a no-op without one)."""
        ...

    @property
    def records_answers(self) -> bool:
        """Whether its answers are replayed from, and recorded to, the recordings. ``False`` for an
        app under test, which runs every time (its own model calls are recorded instead)."""
        ...

    @property
    def answer_identity(self) -> Mapping[str, Any] | None:
        """What else identifies its answers in a recording key: the digest of an app whose whole
        answers are recorded (``{"app": ...}``); ``None`` for every other executor."""
        ...


class ExecutorDefaults:
    """The optional abilities of an executor that has none: no endpoint, the run's timeout, no
    secrets, no HTTP client to share a TLS context with or to open early."""

    @property
    def api_endpoint(self) -> Endpoint | None:
        """No HTTP endpoint."""
        return None

    @property
    def time_budget(self) -> float | None:
        """The run's per-call timeout."""
        return None

    @property
    def secrets(self) -> tuple[str, ...]:
        """Nothing to hide."""
        return ()

    def share_tls(self, tls: SharedTls) -> None:
        """No HTTP client."""

    async def warm(self) -> None:
        """No HTTP client."""

    @property
    def records_answers(self) -> bool:
        """Answers are recorded and replayed."""
        return True

    @property
    def answer_identity(self) -> Mapping[str, Any] | None:
        """Nothing beyond the executor's id and endpoint."""
        return None


class AdaptedExecutor(ExecutorDefaults):
    """A user's executor object with only the answering part (:class:`AnsweringExecutor`): it
    answers, and the optional abilities are those of an executor that has none."""

    def __init__(self, inner: AnsweringExecutor) -> None:
        self._inner = inner

    @property
    def id(self) -> str:
        """The object's own id."""
        return self._inner.id

    @property
    def supports_mocks(self) -> bool:
        """Whether the object intercepts tool calls."""
        return bool(self._inner.supports_mocks)

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """The object's answer."""
        return await self._inner.execute(request)

    async def aclose(self) -> None:
        """Close the object."""
        await self._inner.aclose()

    def __repr__(self) -> str:
        return f"AdaptedExecutor({self._inner!r})"
