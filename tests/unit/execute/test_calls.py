"""The one call path notes every call in the sample's log: answered live, replayed, or failed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pytest_omk.errors import ExecutionError, ReplayMissError
from pytest_omk.execute.base import ExecutorDefaults
from pytest_omk.execute.calls import ModelCalls
from pytest_omk.execute.retry import AdaptiveLimiter, RetryPolicy
from pytest_omk.models.accounting import CallLedger, CallLog
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.store import RecordingStore


class Priced(ExecutorDefaults):
    """Answers with tokens and a cost, or fails when told to."""

    id = "priced"
    supports_mocks = False

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        if self.fail:
            raise ExecutionError("the backend is down")
        return ExecutionResult(output="ok", inputTokens=7, outputTokens=3, costUSD=0.25)

    async def aclose(self) -> None:
        pass


def calls(directory: Path, mode: str) -> ModelCalls:
    store = RecordingStore(directory, mode)  # type: ignore[arg-type]
    return ModelCalls(store=store, limiter=AdaptiveLimiter(4), policy=RetryPolicy(retries=0), timeout=5)


def test_live_then_replayed_calls_are_noted_by_role(tmp_path: Path) -> None:
    ledger = CallLedger()
    live, replay = CallLog(ledger), CallLog(ledger)
    request = ExecutionRequest(prompt="hi", sample_id="s1")
    judged = ExecutionRequest(prompt="grade", sample_id="s1", purpose="judge")
    recording = calls(tmp_path, "new_episodes")
    asyncio.run(recording.call(Priced(), request, log=live))
    asyncio.run(recording.call(Priced(), judged, log=live))
    assert [(r.role, r.model, r.replayed, r.cost_usd, r.input_tokens) for r in live.records] == [
        ("model", "priced", False, 0.25, 7),
        ("judge", "priced", False, 0.25, 7),
    ]
    replaying = calls(tmp_path, "none")
    assert replaying.recorded(Priced(), judged, log=replay) is not None  # the judge reads recordings first
    asyncio.run(replaying.call(Priced(), request, log=replay))
    assert [(r.role, r.replayed) for r in replay.records] == [("judge", True), ("model", True)]
    assert ledger.total().live_cost_usd == 0.5  # replays spend nothing now
    assert ledger.total().calls == 4  # each call recorded once


def test_a_failed_live_call_counts_and_a_replay_miss_does_not(tmp_path: Path) -> None:
    log = CallLog()
    request = ExecutionRequest(prompt="hi", sample_id="s1")
    with pytest.raises(ExecutionError):
        asyncio.run(calls(tmp_path, "off").call(Priced(fail=True), request, log=log))
    assert [(r.role, r.replayed, r.failed, r.cost_usd) for r in log.records] == [("model", False, True, None)]
    missed = CallLog()
    with pytest.raises(ReplayMissError):
        asyncio.run(calls(tmp_path, "none").call(Priced(), request, log=missed))
    assert missed.records == ()
