"""The regression gate checked before any call: a baseline that holds none of the selected items.

``--omk-fail-on-regression`` compares this run with ``--omk-baseline`` on the samples both have.
With none in common (another project's report, another rootdir, a selection of new samples only)
it would compare nothing and pass, so the run stops with a usage error as soon as the items are
known: after collection, or under xdist when the first worker reports its collection (the
controller collects nothing itself).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.compare.baseline import check_overlap
from pytest_omk.errors import ConfigError


class GateCheck:
    """The controller's plugin object for one gate: ``baseline`` (the report) read from ``path``."""

    def __init__(self, baseline: dict[str, Any], path: str) -> None:
        self.baseline = baseline
        self.path = path

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Check the selected items."""
        self._check([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Check the items a worker collected (every worker collects the same)."""
        self._check(ids)

    def _check(self, nodeids: list[str]) -> None:
        try:
            check_overlap(self.baseline, nodeids, path=self.path)
        except ConfigError as exc:
            raise pytest.UsageError(f"omk: {exc}") from None
