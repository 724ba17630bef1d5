"""The call ledger: who called which model, live or replayed, tokens, cost or unknown, recorded once."""

from __future__ import annotations

import threading

from pytest_omk.models.accounting import CallLedger, CallLog, CallRecord, Usage, role_of
from pytest_omk.models.results import ExecutionResult


def test_the_role_follows_the_request_purpose() -> None:
    assert role_of("execute") == "model"
    assert role_of("judge") == "judge"


def test_an_answer_is_recorded_with_its_model_tokens_and_cost() -> None:
    live = CallRecord.answered(
        "model", "gpt-x", ExecutionResult(output="x", inputTokens=3, outputTokens=2, costUSD=0.5)
    )
    replayed = CallRecord.answered("judge", "j", ExecutionResult(output="x", replayed=True))
    assert (live.model, live.replayed, live.input_tokens, live.output_tokens, live.cost_usd) == (
        "gpt-x", False, 3, 2, 0.5,
    )  # fmt: skip
    assert (replayed.replayed, replayed.cost_usd) == (True, None)


def test_usage_sums_what_was_reported_and_counts_what_was_not() -> None:
    usage = Usage.of(
        [
            CallRecord("model", input_tokens=10, output_tokens=5, cost_usd=0.001),
            CallRecord("model", replayed=True, input_tokens=7, cost_usd=0.002),
            CallRecord("model"),  # answered, nothing reported
            CallRecord("model", failed=True),  # no answer: neither tokens nor an unknown cost
            CallRecord("model", input_tokens=4, output_tokens=4, estimated=True),
        ]
    )
    assert (usage.calls, usage.live, usage.replayed, usage.failed) == (5, 4, 1, 1)
    assert (usage.input_tokens, usage.output_tokens) == (21, 9)
    assert usage.cost_usd() == 0.001 + 0.002
    assert usage.cost_unknown == 2
    # What was spent now: the live answered calls only, estimates included and said so.
    assert (usage.live_tokens, usage.live_cost_usd, usage.live_priced) == (23, 0.001, 1)
    assert (usage.unpriced_tokens, usage.estimated, usage.answered_live) == (8, 1, 3)
    nothing = Usage.of([CallRecord("judge")])
    assert (nothing.input_tokens, nothing.output_tokens, nothing.cost_usd()) == (None, None, None)


def test_usage_adds_up() -> None:
    one = Usage.of_call(CallRecord("model", input_tokens=1, cost_usd=0.5))
    two = Usage.of_call(CallRecord("model", replayed=True, output_tokens=2))
    both = one + two
    assert (both.calls, both.live, both.replayed, both.input_tokens, both.output_tokens) == (2, 1, 1, 1, 2)
    assert both == Usage.of([CallRecord("model", input_tokens=1, cost_usd=0.5),
                             CallRecord("model", replayed=True, output_tokens=2)])  # fmt: skip


def test_a_log_keeps_its_sample_apart_and_records_in_the_ledger_by_model_and_role() -> None:
    ledger = CallLedger()
    first, second = CallLog(ledger), CallLog(ledger)
    first.add(CallRecord("model", "a", cost_usd=0.25))
    first.add(CallRecord("judge", "j", cost_usd=0.125))
    second.add(CallRecord("judge", "j", replayed=True, cost_usd=4.0))  # replayed: nothing spent now
    assert first.usage()["judge"].calls == 1 and second.usage()["model"].calls == 0
    assert ledger.total().live_cost_usd == 0.375
    assert (ledger.usage("model").live_cost_usd, ledger.usage("judge").live_cost_usd) == (0.25, 0.125)
    assert ledger.usage("judge").calls == 2
    assert set(ledger.by_model()) == {("a", "model"), ("j", "judge")}


def test_calls_noted_from_many_threads_are_all_counted() -> None:
    ledger = CallLedger()
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
    assert ledger.usage("model").calls == 4000 and ledger.usage("model").live_cost_usd == 4000.0
