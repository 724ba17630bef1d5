"""The spending cap's admission rule and ledger (pytest_omk.execute.budget)."""

from __future__ import annotations

import pytest

from pytest_omk.errors import BudgetExhausted
from pytest_omk.execute.budget import Budget, BudgetLimits, Spend
from pytest_omk.models.results import ExecutionResult


def result(cost: float | None, tokens: int = 10) -> ExecutionResult:
    return ExecutionResult(output="x", costUSD=cost, inputTokens=tokens, outputTokens=0)


def test_admits_until_the_projected_spend_would_pass_the_cap() -> None:
    budget = Budget(BudgetLimits(usd=0.035))
    budget.admit()
    budget.settle("model", result(0.01))
    budget.admit()
    budget.settle("judge", result(0.01))
    budget.admit()  # 0.02 spent + this one at the mean 0.01 = 0.03
    with pytest.raises(BudgetExhausted, match=r"omk budget: --omk-budget-usd 0\.035"):
        budget.admit()  # 0.02 + (1 in flight + this one) x 0.01 = 0.04 > 0.035
    budget.settle("model", result(0.0))
    # Spent stays spent: a cheaper call finishing does not reopen the budget.
    with pytest.raises(BudgetExhausted):
        budget.admit()
    spend = budget.spend()
    assert spend.refused == 2
    assert spend.roles["judge"].cost_usd == 0.01
    assert spend.total().calls == 3


def test_the_first_wave_goes_out_before_any_price_is_known() -> None:
    budget = Budget(BudgetLimits(usd=0.01))
    for _ in range(4):
        budget.admit()
    assert not budget.exhausted


def test_unpriced_calls_count_by_tokens() -> None:
    budget = Budget(BudgetLimits(usd=1.0, tokens=25))
    budget.admit()
    budget.settle("model", result(None, tokens=10))
    budget.admit()
    budget.settle("model", result(None, tokens=10))
    with pytest.raises(BudgetExhausted, match="--omk-budget-tokens 25"):
        budget.admit()
    total = budget.spend().total()
    assert (total.unpriced_calls, total.unpriced_tokens, total.cost_usd) == (2, 20, 0.0)


def test_a_failed_call_frees_its_place() -> None:
    budget = Budget(BudgetLimits(usd=0.02))
    budget.admit()
    budget.settle("model", None)
    budget.admit()
    assert budget.spend().total().calls == 0


def test_spend_round_trips_and_merges() -> None:
    budget = Budget(BudgetLimits(usd=10))
    budget.admit()
    budget.settle("model", result(0.5, tokens=7))
    one = budget.spend()
    two = Spend.of(one.as_dict())
    two.merge(one)
    assert two.total().cost_usd == 1.0 and two.total().tokens == 14


def test_share_splits_the_caps() -> None:
    assert BudgetLimits(usd=1.0, tokens=9).share(2) == BudgetLimits(usd=0.5, tokens=4)
    assert BudgetLimits(usd=1.0).share(1) == BudgetLimits(usd=1.0)


def test_an_apps_calls_settle_with_the_usage_the_gateway_read() -> None:
    budget = Budget(BudgetLimits(usd=0.05, tokens=1000))
    for _ in range(3):
        budget.admit()
    budget.settle_usage("model", 300, 0.02)
    budget.settle_usage("model", 40, None)  # a local model: counted by its tokens only
    budget.settle("model", None)  # the provider refused it: nothing known
    model = budget.spend().roles["model"]
    assert (model.calls, model.priced_calls, model.unpriced_calls) == (2, 1, 1)
    assert (model.tokens, model.unpriced_tokens, model.cost_usd) == (340, 40, 0.02)
    budget.admit()  # 0.02 spent, one in flight at 0.02: within 0.05
    budget.settle_usage("model", 300, 0.02)
    with pytest.raises(BudgetExhausted):
        budget.admit()  # 0.04 spent, 0.02 more would pass the cap
