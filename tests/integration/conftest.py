"""End-to-end runs of the plugin stay offline: every test here clears the provider variables."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _offline(no_provider_env: None) -> None:
    """Every test of this folder runs with ``no_provider_env``."""
