"""The run's model-call machinery: an event loop in a background thread, and the call path
(recordings → concurrency limit → retries → executor) that every model call goes through.

pytest runs items one after another in the main thread. Model calls are I/O-bound, so they run
as coroutines on one private event loop; the main thread submits work and blocks only on the
result it needs next. That is what lets all selected samples be called concurrently while
pytest still reports them in its own order.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from pytest_omk.endpoints import executor_endpoint
from pytest_omk.execute.base import Executor, TransientError
from pytest_omk.execute.retry import AdaptiveLimiter, RetryPolicy, call_with_retries
from pytest_omk.execute.tls import SharedTls
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.progress import CallProgress
from pytest_omk.recordings.store import RecordingStore

T = TypeVar("T")


class CallRunner:
    """An asyncio loop on a daemon thread; coroutines go in, concurrent futures come out."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="pytest-omk-calls", daemon=True)
        self._thread.start()
        self._futures: set[concurrent.futures.Future[Any]] = set()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop."""
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        self._futures.add(future)
        future.add_done_callback(self._futures.discard)
        return future

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it."""
        return self.submit(coro).result()

    def cancel_pending(self) -> None:
        """Cancel every call not finished yet (``-x``, Ctrl-C, end of run)."""
        for future in list(self._futures):
            future.cancel()

    def close(self, cleanup: Coroutine[Any, Any, None] | None = None) -> None:
        """Cancel what is left, run ``cleanup`` (closing clients), stop the loop."""
        self.cancel_pending()
        if cleanup is not None and self._loop.is_running():
            # Closing is best effort: it must never mask the run's outcome.
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(cleanup, self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._loop.is_running():
            self._loop.close()


async def preload(tls: SharedTls, *, judge: bool) -> None:
    """Import the call path and build the run's one TLS context (off the main thread, early).

    Runs on the call loop while pytest collects: the imports and the CA bundle (tens of
    milliseconds each) then cost the first wave of calls nothing.
    """
    import importlib

    for name in ("pytest_omk.pipeline", "pytest_omk.execute.openai", "pytest_omk.execute.anthropic"):
        importlib.import_module(name)
    if judge:
        importlib.import_module("pytest_omk.judge.judge")
    tls.context()


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

    async def call(self, executor: Executor, request: ExecutionRequest) -> ExecutionResult:
        """Answer ``request`` with ``executor``, replaying a recording when the mode allows."""

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

        return await self.store.call(executor.id, request, live, endpoint=executor_endpoint(executor))


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
