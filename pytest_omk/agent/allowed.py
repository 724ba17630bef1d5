"""Which tools a sample's ``allowedTools`` lets the agent's model use."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_omk.errors import ExecutionError
from pytest_omk.models.tool_names import MCP_PREFIX, same_tool


def is_allowed(name: str, allowed: Sequence[str] | None) -> bool:
    """Whether ``allowedTools`` lets the model use the tool offered as ``name``.

    An entry names a tool (canonical aliases accepted: ``bash`` allows ``Bash``), or is
    ``mcp__<server>`` for every tool of that server.
    """
    if allowed is None:
        return True
    return any(
        same_tool(entry, name) or (entry.startswith(MCP_PREFIX) and name.startswith(entry.rstrip("_") + "__"))
        for entry in allowed
    )


def check_allowed_entries(allowed: Sequence[str] | None) -> None:
    """Refuse an entry the agent cannot honour (a permission pattern such as ``Bash(git:*)``)."""
    for entry in allowed or ():
        if "(" in entry:
            # Permission patterns such as Bash(git:*) belong to other runtimes; running without
            # the restriction they express would be wider than the sample asked for.
            raise ExecutionError(
                f"allowedTools entry {entry!r} is a permission pattern the agent executor does not support; "
                "list plain tool names"
            )
