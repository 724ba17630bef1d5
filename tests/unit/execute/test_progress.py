"""The status line's counters and text (no clock: an injected one)."""

from __future__ import annotations

from pytest_omk.execute.progress import CallProgress, render
from pytest_omk.models.accounting import CallRecord


def test_counts_and_eta() -> None:
    now = [0.0]
    progress = CallProgress(clock=lambda: now[0])
    for _ in range(4):
        progress.sample_started()
    progress.attempt_started()
    progress.retrying(1)
    now[0] = 10.0
    progress.sample_finished(failed=False)
    progress.sample_finished(failed=True)
    progress.ledger.note(CallRecord("model", cost_usd=0.00004))  # the cost is read from the ledger
    progress.ledger.note(CallRecord("model", replayed=True, cost_usd=1.0))  # a replay spends nothing
    snapshot = progress.snapshot()
    assert (snapshot.total, snapshot.done, snapshot.in_flight, snapshot.retrying, snapshot.failed) == (
        4,
        2,
        1,
        1,
        1,
    )
    assert snapshot.eta() == 10.0
    assert (
        render(snapshot, "$0.00004")
        == "omk: 2/4 samples · 1 in flight · 1 retrying · 1 failed · $0.00004 · 10s · ETA 10s"
    )
