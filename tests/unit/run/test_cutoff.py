"""A sample cut off by its time limit: its task ends before the cut returns, a call already sent is
counted as a failed live call, a call still queued for a slot is not, and other cancellations
(``-x``, Ctrl-C) count nothing here."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytest_omk.execute.base import ExecutorDefaults
from pytest_omk.execute.calls import ModelCalls
from pytest_omk.execute.retry import AdaptiveLimiter, RetryPolicy
from pytest_omk.models.accounting import CallLedger, CallLog
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.store import RecordingStore
from pytest_omk.run.cutoff import Tracked, cut_off, tracked


class Held(ExecutorDefaults):
    """Answers ``fast`` prompts at once and holds every other until cancelled."""

    id = "held"
    supports_mocks = False

    def __init__(self) -> None:
        self.sent = 0

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        self.sent += 1
        if request.prompt != "fast":
            await asyncio.Event().wait()  # never set: only a cancellation ends it
        return ExecutionResult(output="ok", inputTokens=1, outputTokens=1)

    async def aclose(self) -> None:
        pass


def model_calls(directory: Path, slots: int, ledger: CallLedger) -> ModelCalls:
    store = RecordingStore(directory, "off")
    policy = RetryPolicy(retries=0)
    return ModelCalls(store=store, limiter=AdaptiveLimiter(slots), policy=policy, timeout=300, ledger=ledger)


async def sample_calls(
    calls: ModelCalls, executor: Held, prompts: list[str], log: CallLog
) -> list[ExecutionResult]:
    requests = [ExecutionRequest(prompt=p, sample_id="s", repeat=i) for i, p in enumerate(prompts)]
    return list(await asyncio.gather(*(calls.call(executor, r, log=log) for r in requests)))


async def started(executor: Held, sent: int) -> None:
    while executor.sent < sent:  # counts the executor's calls: no clock
        await asyncio.sleep(0)


def test_a_cut_counts_the_sent_call_and_not_the_queued_one(tmp_path: Path) -> None:
    ledger, executor = CallLedger(), Held()
    log = CallLog(ledger)
    # One slot: "fast" answers, then the first "held" is sent and holds it; the second waits.
    calls = model_calls(tmp_path, 1, ledger)

    async def scenario() -> Tracked:
        slot = Tracked()
        task = asyncio.ensure_future(
            tracked(sample_calls(calls, executor, ["fast", "held", "held"], log), slot)
        )
        await started(executor, 2)
        while len(log.records) < 1:  # the fast answer is noted
            await asyncio.sleep(0)
        assert slot.task is task
        await cut_off(task)
        assert task.cancelled()
        return slot

    asyncio.run(scenario())
    used = log.busy()
    assert log.busy() == used  # the cut call has ended: the sample's time stands still
    assert executor.sent == 2  # the queued call was never sent
    assert [(r.failed, r.replayed) for r in log.records] == [(False, False), (True, False)]
    assert ledger.total().calls == 2 and ledger.total().failed == 1


def test_any_cancellation_of_a_sent_call_counts_it_once(tmp_path: Path) -> None:
    # One rule for every cut (docs/reporting.md): a call sent is paid for, whoever cancels it.
    log, executor = CallLog(), Held()
    calls = model_calls(tmp_path, 2, CallLedger())

    async def scenario() -> None:
        task = asyncio.ensure_future(sample_calls(calls, executor, ["held"], log))
        await started(executor, 1)
        task.cancel()  # the end of the run loop, Ctrl-C: not the sample's limit
        await asyncio.wait({task})

    asyncio.run(scenario())
    assert [(r.failed, r.replayed) for r in log.records] == [(True, False)]
