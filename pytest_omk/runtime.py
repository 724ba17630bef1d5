"""The run's model-call path (recordings → concurrency limit → retries → executor) that every
model call goes through, and its warm-up.

pytest runs items one after another in the main thread. Model calls are I/O-bound, so they run
as coroutines on one private event loop (:mod:`pytest_omk.call_loop`); the main thread submits
work and blocks only on the result it needs next. That is what lets all selected samples be
called concurrently while pytest still reports them in its own order.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pytest_omk.endpoints import executor_endpoint
from pytest_omk.execute.base import Executor, TransientError
from pytest_omk.execute.retry import AdaptiveLimiter, RetryPolicy, call_with_retries
from pytest_omk.execute.tls import SharedTls
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.progress import CallProgress
from pytest_omk.recordings.store import RecordingStore


async def preload(*, judge: bool) -> None:
    """Import the call path (off the main thread, early).

    Runs on the call loop while pytest collects, after :func:`~pytest_omk.call_loop.preload_transport`:
    the imports (tens of milliseconds) then cost the first wave of calls nothing.
    """
    import importlib

    for name in ("pytest_omk.pipeline", "pytest_omk.execute.openai", "pytest_omk.execute.anthropic"):
        importlib.import_module(name)
    if judge:
        importlib.import_module("pytest_omk.judge.judge")


def share_tls(executors: list[Executor], tls: SharedTls) -> list[Executor]:
    """Give the executors that build HTTP clients the run's one TLS context; returns ``executors``.

    Called before any call is submitted: a call that starts before :func:`warm_clients` has run
    still builds its client with the shared context.
    """
    for executor in executors:
        share = getattr(executor, "share_tls", None)
        if share is not None:
            share(tls)
    return executors


async def warm_clients(executors: list[Executor]) -> None:
    """Open each executor's HTTP client now (those that have one)."""
    for executor in executors:
        warm = getattr(executor, "warm", None)
        if warm is not None:
            # Best effort: a client that cannot be built now fails its first call instead, with
            # the call's own error handling.
            with contextlib.suppress(Exception):
                await warm()


@dataclass
class ModelCalls:
    """The single path of every model call: recordings, then limit + retries around the executor."""

    store: RecordingStore
    limiter: AdaptiveLimiter
    policy: RetryPolicy
    timeout: float
    progress: CallProgress | None = None
    """Counters for the status line (calls in flight, retrying, cost)."""

    def recorded(self, executor: Executor, request: ExecutionRequest) -> ExecutionResult | None:
        """The recording :meth:`call` would replay for ``request``, without waiting; ``None`` otherwise."""
        return self.store.recorded(executor.id, request, endpoint=executor_endpoint(executor))

    async def call(self, executor: Executor, request: ExecutionRequest, *, looked_up: bool = False) -> ExecutionResult:
        """Answer ``request`` with ``executor``, replaying a recording when the mode allows.

        ``looked_up``: :meth:`recorded` has just found no recording for it (not looked up again).
        """

        async def attempt() -> ExecutionResult:
            start = time.perf_counter()
            # The executor enforces its own timeout; this outer bound only guards against an
            # executor that ignores it, so a call can never hang the run.
            try:
                budget = getattr(executor, "time_budget", None) or self.timeout
                result = await asyncio.wait_for(executor.execute(request), budget + 5)
            except TimeoutError:
                raise TransientError(f"the call did not finish within {budget:g}s") from None
            if result.latencyMs is None:
                elapsed = round((time.perf_counter() - start) * 1000, 3)
                result = result.model_copy(update={"latencyMs": elapsed})
            return result

        async def live() -> ExecutionResult:
            if self.progress is None:
                result, retries = await call_with_retries(attempt, policy=self.policy, limiter=self.limiter)
            else:
                result, retries = await tracked(self.progress, attempt, self.policy, self.limiter)
            return result.model_copy(update={"retries": retries, "replayed": False})

        return await self.store.call(executor.id, request, live, endpoint=executor_endpoint(executor), looked_up=looked_up)


async def tracked(
    progress: CallProgress,
    attempt: Callable[[], Awaitable[ExecutionResult]],
    policy: RetryPolicy,
    limiter: AdaptiveLimiter,
) -> tuple[ExecutionResult, int]:
    """``call_with_retries`` with the call counted in flight per attempt, and as retrying from its
    first transient failure until it ends."""
    retried = False

    async def counted() -> ExecutionResult:
        nonlocal retried
        progress.attempt_started()
        try:
            return await attempt()
        except TransientError:
            if not retried:
                retried = True
                progress.retrying(1)
            raise
        finally:
            progress.attempt_finished()

    try:
        result, retries = await call_with_retries(counted, policy=policy, limiter=limiter)
    finally:
        if retried:
            progress.retrying(-1)
    progress.add_cost(result.costUSD)
    return result, retries
