"""A small stdio MCP server whose tools an agent calls: ``python tests/fakes/mcp_tool_server.py``.

Tools:

- ``save_observation(summary, confirmedByUser)``: answers ``saved observation obs-1: <summary>``
  and appends the call as a JSON line to ``$OBS_LOG`` when set (so tests see the real call).
- ``lookup_owner(service)``: the owning team of a service from a fixed table.
- ``whoami()``: echoes the ``OBS_API_TOKEN`` from its environment, to prove the agent scrubs
  server env values out of every tool result.
- ``fail()``: an MCP error result; ``slow(seconds)``: sleeps (for call timeouts).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("omk-test-tools")

OWNERS = {"billing-webhook": "Payments Platform", "search": "Discovery"}


@server.tool()
def save_observation(summary: str, confirmedByUser: bool) -> str:  # the wire name the samples use
    """Record a knowledge-gap observation; confirmedByUser must be true for a real save."""
    log = os.environ.get("OBS_LOG")
    if log:
        with Path(log).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"summary": summary, "confirmedByUser": confirmedByUser}) + "\n")
    return f"saved observation obs-1: {summary}"


@server.tool()
def lookup_owner(service: str) -> str:
    """The team that owns ``service``."""
    return OWNERS.get(service, "unknown")


@server.tool()
def whoami() -> str:
    """Report the token this server was started with."""
    return f"token={os.environ.get('OBS_API_TOKEN', '')}"


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("the observation store is read-only")


@server.tool()
def slow(seconds: float) -> str:
    """Sleep for ``seconds``."""
    time.sleep(seconds)
    return "slept"


if __name__ == "__main__":
    server.run()
