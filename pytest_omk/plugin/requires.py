"""A sample file's ``requires``: an item whose requirements are not met is skipped in its setup.

One plugin object (``omk-requires``). The session asks :meth:`Requirements.reason` to leave such
items out of the calls it starts ahead of the run loop; the skip itself is this object's hook.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_omk.plugin.collection import NO_EXECUTOR
from pytest_omk.plugin.item_records import note
from pytest_omk.plugin.nodes import SampleItem

if TYPE_CHECKING:
    from pytest_omk.execute.base import Executor


class Requirements:
    """Why an item will not run (no executor, unmet ``requires``), each file's asked once."""

    def __init__(self, executor: Callable[[], Executor | None]) -> None:
        self._executor = executor
        self._unmet: dict[Path, list[str]] = {}

    def reason(self, item: SampleItem) -> str | None:
        """Why ``item`` is skipped, or ``None`` when it runs."""
        if self._executor() is None:
            return NO_EXECUTOR
        key = item.bundle.path
        if key not in self._unmet:
            # Lazy: it imports the sample models (pydantic), no part of a plain run's start-up.
            from pytest_omk.run.requires import unmet_requirements

            self._unmet[key] = unmet_requirements(item.bundle.requires, item.bundle.base_dir)
        unmet = self._unmet[key]
        return "requires not met: " + "; ".join(unmet) if unmet else None

    def runs(self, item: SampleItem) -> bool:
        """Whether ``item`` runs (it has an executor and its ``requires`` are met)."""
        return self.reason(item) is None

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Skip a sample whose requirements are not met (its record says why)."""
        if not isinstance(item, SampleItem):
            return
        reason = self.reason(item)
        if reason is not None:
            note(item, {"skipReason": reason})
            pytest.skip(reason)
