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
from dataclasses import dataclass, field, replace

from pytest_omk.errors import BudgetExhausted
from pytest_omk.execute.base import Executor, TransientError
from pytest_omk.execute.budget import Budget
from pytest_omk.execute.in_flight import InFlight
from pytest_omk.execute.progress import CallProgress
from pytest_omk.execute.retry import AdaptiveLimiter, RetryPolicy, call_with_retries
from pytest_omk.models.accounting import CallLedger, CallLog, CallRecord, Role, role_of
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.endpoints import endpoint_key
from pytest_omk.recordings.store import RecordingStore

CUT_OFF = "omk: the sample's time ran out"
"""The message a sample's calls are cancelled with when its time limit ends them
(``run/cutoff.py``). A call already sent is counted as a failed live call however it is cancelled
(``execute/in_flight.py``): it was spent."""


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
    ledger: CallLedger = field(default_factory=CallLedger)
    """Where every call is recorded (through the sample's log when there is one)."""
    in_flight: InFlight = field(default_factory=InFlight)
    """The calls sent and not answered yet: a run that ends normally waits for them (they count)."""
    app_limiter: AdaptiveLimiter | None = None
    """How many runs of an app under test at once (``None``: as many as ``limiter`` allows). An
    app's run is no model call: its model calls take ``limiter``'s slots at the gateway, which
    runs holding them could starve."""

    def __post_init__(self) -> None:
        if self.app_limiter is None:
            self.app_limiter = AdaptiveLimiter(self.limiter.limit)

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
        if result is not None:
            self._note(
                log, CallRecord.answered(role_of(request.purpose), request.model or executor.id, result)
            )
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
        live call has failed for good (a replay miss made no call). An app under test is no model
        call: the gateway notes each of its model calls in ``log`` instead.
        """
        role, model = role_of(request.purpose), request.model or executor.id
        app = not executor.records_answers
        if app:
            request = replace(request, calls=log)
        note = functools.partial(self._note, log)
        attempt = Sending(functools.partial(self._attempt, executor, request), log)
        sent = False

        async def live() -> ExecutionResult:
            nonlocal sent
            sent = True
            try:
                result, retries = await self._sent(executor, attempt, role, model, note)
            except Exception as exc:
                if not app and not isinstance(exc, BudgetExhausted):  # refused: never sent
                    note(CallRecord(role, model, failed=True))
                raise
            # An app under test runs live whatever its model calls did: its result says whether
            # those were all replayed.
            replayed = result.replayed if result.appCalls is not None else False
            return result.model_copy(update={"retries": retries, "replayed": replayed})

        if app:  # an app under test: its answer is never looked up nor recorded
            return _noting_report(await live(), model, note)
        answer = await self.store.call(
            executor.id,
            request,
            live,
            endpoint=executor_endpoint(executor),
            looked_up=looked_up,
            app=executor.answer_identity,
        )
        if not sent:
            note(CallRecord.answered(role, model, answer))  # replayed
        return answer

    def _note(self, log: CallLog | None, record: CallRecord) -> None:
        """Record one call: in the sample's log (which records it in the ledger), or the ledger."""
        if log is not None:
            log.add(record)
        else:
            self.ledger.note(record)

    async def _sent(
        self,
        executor: Executor,
        attempt: Sending,
        role: Role,
        model: str,
        note: Callable[[CallRecord], None],
    ) -> tuple[ExecutionResult, int]:
        """A live ``attempt``: an app's run in its own slots; a model call asking the budget, and
        noted as soon as it is answered (before the budget settles it: the ledger is what it reads).
        A call sent and then cut off (Ctrl-C, the settle bound, its sample's time limit) is noted failed."""

        def answered(result: ExecutionResult) -> None:
            note(CallRecord.answered(role, model, result.model_copy(update={"replayed": False})))

        try:
            if not executor.records_answers:  # an app's run: a normal end waits for it too
                return await self._live(self.in_flight.finishing(attempt, None), self.app_limiter)
            # Sent is spent: a run ending normally waits for its answer; one cut off still counts.
            counted = self.in_flight.finishing(attempt, lambda: note(CallRecord(role, model, failed=True)))
            if self.budget is None:
                result, retries = await self._live(counted)
                answered(result)
                return result, retries
            return await budgeted(self.budget, counted, self._live, answered)
        finally:
            attempt.ended()

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

    async def _live(
        self, attempt: Callable[[], Awaitable[ExecutionResult]], limiter: AdaptiveLimiter | None = None
    ) -> tuple[ExecutionResult, int]:
        """``attempt`` under the concurrency limit, with retries (counted for the status line)."""
        limiter = limiter or self.limiter
        if self.progress is None:
            return await call_with_retries(attempt, policy=self.policy, limiter=limiter)
        return await tracked(self.progress, attempt, self.policy, limiter)


class Sending:
    """One live call's attempts: whether one was sent (it got a call slot), told to the sample's
    log from the first attempt until the call ends (:meth:`CallLog.busy`, the sample's own time)."""

    def __init__(self, attempt: Callable[[], Awaitable[ExecutionResult]], log: CallLog | None) -> None:
        self._attempt = attempt
        self._log = log
        self.sent = False

    async def __call__(self) -> ExecutionResult:
        """One attempt, sent now."""
        if not self.sent and self._log is not None:
            self._log.call_sent()
        self.sent = True
        return await self._attempt()

    def ended(self) -> None:
        """The call is over (answered, failed for good or cancelled)."""
        if self.sent and self._log is not None:
            self._log.call_ended()


async def budgeted(
    budget: Budget,
    attempt: Callable[[], Awaitable[ExecutionResult]],
    run: Callable[[Callable[[], Awaitable[ExecutionResult]]], Awaitable[tuple[ExecutionResult, int]]],
    answered: Callable[[ExecutionResult], None],
) -> tuple[ExecutionResult, int]:
    """``run(attempt)`` with the call admitted by ``budget`` first and settled when it ends, once
    ``answered`` has recorded what it used in the ledger the budget reads.

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
        answered(result)
    finally:
        if admitted:
            budget.settle()
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
    return result, retries


def _noting_report(
    answer: ExecutionResult, model: str, note: Callable[[CallRecord], None]
) -> ExecutionResult:
    """An app's ``answer``, its own report of what it used noted when no call through the gateway
    explains it (an app that reaches its model another way); the gateway noted the calls it saw."""
    calls = answer.appCalls
    through_gateway = calls is not None and calls.live + calls.replayed > 0
    said = answer.inputTokens is not None or answer.outputTokens is not None or answer.costUSD is not None
    if said and not through_gateway:
        note(CallRecord("model", model, input_tokens=answer.inputTokens, output_tokens=answer.outputTokens,
                        cost_usd=answer.costUSD, reported=True))  # fmt: skip
    return answer
