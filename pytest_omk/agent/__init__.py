"""The built-in tool-using executor (``--omk-executor agent``): loop, tools, isolation, mocks, MCP.

Pure Python (no pytest import). See docs/agents.md for the user-facing description.
"""

from __future__ import annotations

from pytest_omk.agent.allowed import is_allowed
from pytest_omk.agent.loop import AgentExecutor
from pytest_omk.agent.options import AgentOptions

__all__ = ["AgentExecutor", "AgentOptions", "is_allowed"]
