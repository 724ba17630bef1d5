"""The budget (``--omk-budget-usd``, ``--omk-budget-tokens``) on the pytest side: a sample whose
call the budget refused is SKIPPED, and an xdist worker sends how many live calls it refused to
the controller (whose :class:`~pytest_omk.plugin.summary_parts.SummaryParts` adds the workers' up).
What the calls spent rides on the records (their ``usage``), as every call's usage does."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING

import pytest

from pytest_omk.errors import BudgetExhausted
from pytest_omk.plugin.item_records import note
from pytest_omk.plugin.nodes import SampleItem

if TYPE_CHECKING:
    from pytest_omk.execute.budget import Budget


class WorkerRefusals:
    """On an xdist worker: send how many live calls its budget refused to the controller."""

    def __init__(self, config: pytest.Config, budget: Callable[[], Budget | None]) -> None:
        self.config = config
        self.budget = budget
        """The worker's budget, built on first use (after collection: a shard's part needs its cut)."""

    def pytest_sessionfinish(self) -> None:
        """Put the count in the worker's output (sent with its last message)."""
        budget = self.budget()
        if budget is not None:
            self.config.workeroutput["omk_refused"] = budget.refused  # type: ignore[attr-defined]


class BudgetSkip:
    """``omk-budget-skip``: a sample whose call the budget refused is skipped, never failed or passed.

    The refusal reaches the item's setup from the session's wait for its runs
    (:class:`BudgetExhausted`, whose message is the skip reason the reports carry).
    """

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        """Around the item's setup steps: turn a refusal into the skip, with its reason in the record."""
        try:
            return (yield)
        except BudgetExhausted as exc:
            if not isinstance(item, SampleItem):
                raise
            reason = str(exc)
        # Outside the ``except``: the skip carries no chained refusal.
        note(item, {"skipReason": reason})
        pytest.skip(reason)
