"""Fixtures of the reliability suite: the integration helpers (``omk_run``, provider variables
cleared) plus the transport modules loaded before any in-process pytester run."""

from __future__ import annotations

import importlib

import pytest


@pytest.fixture(autouse=True, scope="session")
def _transport_modules_loaded() -> None:
    """Import httpx's lazily loaded transport stack and the MCP client once, up front.

    An in-process pytester run forgets every module first imported inside it; were httpcore or
    anyio first imported there, later runs would get second copies and httpx would stop mapping
    connection errors (the agent e2e tests explain the same trap).
    """
    for name in ("anyio", "h11", "httpcore._async.http11", "httpcore._backends.anyio", "mcp.client.stdio"):
        importlib.import_module(name)


@pytest.fixture(autouse=True)
def _offline(no_provider_env: None) -> None:
    """Every test of this folder runs with ``no_provider_env``."""
