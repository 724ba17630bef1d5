"""The per-call accounting: who called, live or replayed, tokens, cost or unknown."""

from __future__ import annotations

import threading

from pytest_omk.models.accounting import CallLog, CallRecord, RunLedger, Usage, role_of
from pytest_omk.models.results import ExecutionResult


def test_the_role_follows_the_request_purpose() -> None:
    assert role_of("execute") == "model"
    assert role_of("judge") == "judge"


def test_an_answer_is_recorded_with_its_tokens_and_cost() -> None:
    live = CallRecord.answered(
        "model", ExecutionResult(output="x", inputTokens=3, outputTokens=2, costUSD=0.5)
    )
    replayed = CallRecord.answered("judge", ExecutionResult(output="x", replayed=True))
    assert (live.live, live.replayed, live.input_tokens, live.output_tokens, live.cost_usd) == (
        True,
        False,
        3,
        2,
        0.5,
    )
    assert (replayed.live, replayed.replayed, replayed.cost_usd) == (False, True, None)


def test_usage_sums_what_was_reported_and_counts_what_was_not() -> None:
    usage = Usage.of(
        [
            CallRecord("model", input_tokens=10, output_tokens=5, cost_usd=0.001),
            CallRecord("model", replayed=True, input_tokens=7, cost_usd=0.002),
            CallRecord("model"),  # answered, nothing reported
            CallRecord("model", failed=True),  # no answer: neither tokens nor an unknown cost
        ]
    )
    assert (usage.calls, usage.live, usage.replayed, usage.failed) == (4, 3, 1, 1)
    assert (usage.input_tokens, usage.output_tokens) == (17, 5)
    assert usage.cost_usd() == 0.001 + 0.002
    assert usage.cost_unknown == 1
    nothing = Usage.of([CallRecord("judge")])
    assert (nothing.input_tokens, nothing.output_tokens, nothing.cost_usd()) == (None, None, None)


def test_a_log_keeps_its_sample_apart_and_feeds_the_run_ledger() -> None:
    ledger = RunLedger()
    first, second = CallLog(ledger), CallLog(ledger)
    first.add(CallRecord("model", cost_usd=0.25))
    first.add(CallRecord("judge", cost_usd=0.125))
    second.add(CallRecord("judge", replayed=True, cost_usd=4.0))  # replayed: nothing spent now
    assert first.usage()["judge"].calls == 1 and second.usage()["model"].calls == 0
    assert ledger.spent() == 0.375
    assert (ledger.spent("model"), ledger.spent("judge")) == (0.25, 0.125)
    assert ledger.usage("judge").calls == 2


def test_calls_noted_from_many_threads_are_all_counted() -> None:
    ledger = RunLedger()
    log = CallLog(ledger)

    def note() -> None:
        for _ in range(500):
            log.add(CallRecord("model", cost_usd=1.0))

    threads = [threading.Thread(target=note) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(log.records) == 4000
    assert ledger.usage("model").calls == 4000 and ledger.spent("model") == 4000.0
