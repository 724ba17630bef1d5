"""The budget on the pytest side of an xdist worker: how many live calls it refused, sent to the
controller (whose :class:`~pytest_omk.plugin.summary_parts.SummaryParts` adds the workers' up).
What the calls spent rides on the records (their ``usage``), as every call's usage does."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

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
