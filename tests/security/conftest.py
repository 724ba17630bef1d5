"""Fixtures of the security suite: the integration helpers (``omk_run``, provider variables cleared).

Every test carries ``@pytest.mark.probe("<class>")``; ``python -m tests.security.table`` runs the
suite and counts, per class, the probes tried and held (docs/security.md has the table).
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Carry each probe's class on its reports (they cross xdist; markers' arguments do not)."""
    for item in items:
        mark = item.get_closest_marker("probe")
        if mark is not None:
            item.user_properties.append(("probe", str(mark.args[0])))


@pytest.fixture(autouse=True)
def _offline(no_provider_env: None) -> None:
    """Every test of this folder runs with ``no_provider_env``."""
