"""The spending cap's admission rule, a check over the run's call ledger (pytest_omk.execute.budget)."""

from __future__ import annotations

import pytest

from pytest_omk.errors import BudgetExhausted
from pytest_omk.execute.budget import Budget, BudgetLimits
from pytest_omk.models.accounting import CallLedger, CallRecord


def call(budget: Budget, cost: float | None, tokens: int = 10, *, role: str = "model") -> None:
    """One admitted live call, recorded in the ledger, then settled (as the call path does)."""
    budget.ledger.note(CallRecord("judge" if role == "judge" else "model", "m", input_tokens=tokens,
                                  output_tokens=0, cost_usd=cost))  # fmt: skip
    budget.settle()


def test_admits_until_the_projected_spend_would_pass_the_cap() -> None:
    budget = Budget(BudgetLimits(usd=0.035), CallLedger())
    budget.admit()
    call(budget, 0.01)
    budget.admit()
    call(budget, 0.01, role="judge")
    budget.admit()  # 0.02 spent + this one at the mean 0.01 = 0.03
    with pytest.raises(BudgetExhausted, match=r"omk budget: --omk-budget-usd 0\.035"):
        budget.admit()  # 0.02 + (1 in flight + this one) x 0.01 = 0.04 > 0.035
    call(budget, 0.0)
    # Spent stays spent: a cheaper call finishing does not reopen the budget.
    with pytest.raises(BudgetExhausted):
        budget.admit()
    assert budget.refused == 2
    assert budget.ledger.usage("judge").live_cost_usd == 0.01
    assert budget.ledger.total().answered_live == 3


def test_the_first_wave_goes_out_before_any_price_is_known() -> None:
    budget = Budget(BudgetLimits(usd=0.01), CallLedger())
    for _ in range(4):
        budget.admit()
    assert not budget.exhausted


def test_unpriced_calls_count_by_tokens() -> None:
    budget = Budget(BudgetLimits(usd=1.0, tokens=25), CallLedger())
    budget.admit()
    call(budget, None, tokens=10)
    budget.admit()
    call(budget, None, tokens=10)
    with pytest.raises(BudgetExhausted, match="--omk-budget-tokens 25"):
        budget.admit()
    total = budget.ledger.total()
    assert (total.answered_live - total.live_priced, total.unpriced_tokens, total.live_cost_usd) == (
        2,
        20,
        0.0,
    )


def test_a_failed_call_frees_its_place_and_counts_nothing() -> None:
    budget = Budget(BudgetLimits(usd=0.02), CallLedger())
    budget.admit()
    budget.ledger.note(CallRecord("model", "m", failed=True))
    budget.settle()
    budget.admit()
    assert budget.ledger.total().answered_live == 0


def test_share_splits_the_caps() -> None:
    assert BudgetLimits(usd=1.0, tokens=9).share(2) == BudgetLimits(usd=0.5, tokens=4)
    assert BudgetLimits(usd=1.0).share(1) == BudgetLimits(usd=1.0)


def test_replayed_calls_in_the_ledger_spend_nothing() -> None:
    budget = Budget(BudgetLimits(usd=0.01), CallLedger())
    for _ in range(5):
        budget.ledger.note(CallRecord("model", "m", replayed=True, input_tokens=100, cost_usd=1.0))
    budget.admit()  # replays cost nothing now: the cap is untouched
    assert budget.ledger.total().live_cost_usd == 0.0
