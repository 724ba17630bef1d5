"""The run's model-call path (recordings → concurrency limit → retries → executor) that every
model call goes through.

pytest runs items one after another in the main thread. Model calls are I/O-bound, so they run
as coroutines on one private event loop (:mod:`pytest_omk.run.loop`, which also warms it up); the main thread submits
work and blocks only on the result it needs next. That is what lets all selected samples be
called concurrently while pytest still reports them in its own order.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pytest_omk.execute.base import Executor, TransientError
from pytest_omk.execute.budget import Budget
from pytest_omk.execute.progress import CallProgress
from pytest_omk.execute.retry import AdaptiveLimiter, RetryPolicy, call_with_retries
from pytest_omk.models.accounting import CallLog, CallRecord, Role, role_of
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.endpoints import endpoint_key
from pytest_omk.recordings.store import RecordingStore


def executor_endpoint(executor: Executor) -> str | None:
    """The endpoint key of an HTTP executor, else ``None``."""
    api = executor.api_endpoint
    return endpoint_key(api.url) if api is not None and api.url else None


@dataclass
class ModelCalls:
    """The single path of every model call: recordings, then limit + retries around the executor."""

    store: RecordingStore
    limiter: AdaptiveLimiter
    policy: RetryPolicy
    timeout: float
    progress: CallProgress | None = None
    """Counters for the status line (calls in flight, retrying, cost)."""
    budget: Budget | None = None
    """The run's spending cap: every live call asks it first (``--omk-budget-usd``/``-tokens``)."""

    def recorded(
        self, executor: Executor, request: ExecutionRequest, *, log: CallLog | None = None
    ) -> ExecutionResult | None:
        """The recording :meth:`call` would replay for ``request``, without waiting; ``None`` otherwise.

        A recording found is a call answered: it is noted in ``log``.
        """
        if not executor.records_answers:
            return None
        result = self.store.recorded(
            executor.id, request, endpoint=executor_endpoint(executor), app=executor.answer_identity
        )
        if result is not None and log is not None:
            log.add(CallRecord.answered(role_of(request.purpose), result))
        return result

    async def call(
        self,
        executor: Executor,
        request: ExecutionRequest,
        *,
        looked_up: bool = False,
        log: CallLog | None = None,
    ) -> ExecutionResult:
        """Answer ``request`` with ``executor``, replaying a recording when the mode allows.

        ``looked_up``: :meth:`recorded` has just found no recording for it (not looked up again).
        ``log``: the sample's call log, where the call is noted once it is answered, or once a
        live call has failed for good (a replay miss made no call).
        """
        role = role_of(request.purpose)
        attempt = functools.partial(self._attempt, executor, request)

        async def live() -> ExecutionResult:
            try:
                # An app under test's run costs nothing itself: its model calls ask the budget
                # at the gateway, one by one, with what each cost.
                if self.budget is None or not executor.records_answers:
                    result, retries = await self._live(attempt)
                else:
                    result, retries = await budgeted(self.budget, role, attempt, self._live)
            except Exception:
                # A model call that failed for good counts; an app under test that failed made no
                # call of its own through here (its model calls go through the gateway).
                if log is not None and executor.records_answers:
                    log.add(CallRecord(role, failed=True))
                raise
            # An app under test runs live whatever its model calls did: its result says whether
            # those were all replayed.
            replayed = result.replayed if result.appCalls is not None else False
            return result.model_copy(update={"retries": retries, "replayed": replayed})

        if not executor.records_answers:
            answer = await live()  # an app under test: its answer is never looked up nor recorded
        else:
            answer = await self.store.call(
                executor.id,
                request,
                live,
                endpoint=executor_endpoint(executor),
                looked_up=looked_up,
                app=executor.answer_identity,
            )
        if log is not None:
            log.add(CallRecord.answered(role, answer))
        return answer

    async def _attempt(self, executor: Executor, request: ExecutionRequest) -> ExecutionResult:
        """One try of the executor, timed."""
        start = time.perf_counter()
        # The executor enforces its own timeout; this outer bound only guards against an
        # executor that ignores it, so a call can never hang the run.
        try:
            budget = executor.time_budget or self.timeout
            result = await asyncio.wait_for(executor.execute(request), budget + 5)
        except TimeoutError:
            raise TransientError(f"the call did not finish within {budget:g}s", timed_out=True) from None
        if result.latencyMs is None:
            elapsed = round((time.perf_counter() - start) * 1000, 3)
            result = result.model_copy(update={"latencyMs": elapsed})
        return result

    async def _live(self, attempt: Callable[[], Awaitable[ExecutionResult]]) -> tuple[ExecutionResult, int]:
        """``attempt`` under the concurrency limit, with retries (counted for the status line)."""
        if self.progress is None:
            return await call_with_retries(attempt, policy=self.policy, limiter=self.limiter)
        return await tracked(self.progress, attempt, self.policy, self.limiter)


async def budgeted(
    budget: Budget,
    role: Role,
    attempt: Callable[[], Awaitable[ExecutionResult]],
    run: Callable[[Callable[[], Awaitable[ExecutionResult]]], Awaitable[tuple[ExecutionResult, int]]],
) -> tuple[ExecutionResult, int]:
    """``run(attempt)`` with the call admitted by ``budget`` first and settled when it ends.

    Admission happens in the first attempt, inside the concurrency slot: calls queued behind the
    limit ask when they are about to be sent, so the projection sees the calls really in flight.
    A refusal (:class:`BudgetExhausted`) is not transient: it is never retried.
    """
    admitted = False

    async def first_admitted() -> ExecutionResult:
        nonlocal admitted
        if not admitted:
            budget.admit()
            admitted = True
        return await attempt()

    try:
        result, retries = await run(first_admitted)
    except BaseException:
        if admitted:
            budget.settle(role, None)
        raise
    budget.settle(role, result)
    return result, retries


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
