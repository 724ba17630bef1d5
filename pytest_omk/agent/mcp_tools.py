"""Tools served by MCP servers, offered to the agent as ``mcp__<server>__<tool>``.

The servers are the ``mcpServers`` entries with a ``command`` (stdio transport; ``args`` and
``env`` optional) in the MCP config: ``--omk-mcp-config``, else ``.mcp.json`` at the rootdir.
They are started once per run, when the first agent run needs its tools, and stopped by
:meth:`McpTools.aclose`. The ``mcp`` SDK is imported only then.

``env`` values are usually tokens. They reach the server process only: every tool result is
scrubbed of them before the model (and so the trace, recordings and reports) sees it, and so is
every error message. Finding and reading the config and running a server are shared with the URL
resolver (:mod:`pytest_omk.resolve.mcp_servers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_omk.agent.tools import ToolResult, ToolSpec, truncate
from pytest_omk.errors import ConfigError, ExecutionError
from pytest_omk.models.tool_names import mcp_tool_name
from pytest_omk.resolve.mcp_servers import (
    McpServerSpec,
    StdioServer,
    describe_error,
    env_secrets,
    launch_fields,
    read_mcp_config,
    scrub,
)

START_TIMEOUT = 30.0
MIN_SECRET_LENGTH = 8
"""Shorter env values (``1``, ``true``, ``info``) are settings, not tokens: scrubbing them would
mangle ordinary tool output."""
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")


def load_mcp_servers(path: Path) -> list[McpServerSpec]:
    """The stdio servers of an MCP config file (entries without ``command`` are skipped)."""
    data = read_mcp_config(path)
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f"MCP config {path}: expected an object with an mcpServers object")
    specs = []
    for name, entry in servers.items():
        if not isinstance(entry, dict) or "command" not in entry:
            continue  # HTTP/SSE servers and comments: not served to the agent
        command, args, env = launch_fields(entry, f"MCP config {path}: mcpServers.{name}")
        specs.append(McpServerSpec(str(name), command, args, env))
    return specs


def result_text(result: Mapping[str, Any]) -> str:
    """The text of a ``tools/call`` result: its text items, placeholders for other content."""
    parts: list[str] = []
    for item in result.get("content") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            parts.append(item["text"])
        else:
            parts.append(f"[{item.get('type', 'content')} content]")
    if not parts and result.get("structuredContent") is not None:
        parts.append(json.dumps(result["structuredContent"], ensure_ascii=False, separators=(",", ":")))
    return "\n".join(parts)


class McpTools:
    """The tools of the configured MCP servers, started on first use (one instance per run)."""

    def __init__(self, servers: Sequence[McpServerSpec], *, timeout: float) -> None:
        self.servers = tuple(servers)
        self.timeout = timeout
        self._secrets = env_secrets(self.servers, MIN_SECRET_LENGTH)
        self._running: list[StdioServer] = []
        self._tools: dict[str, tuple[StdioServer, str]] = {}
        self._specs: list[ToolSpec] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._starting: asyncio.Task[None] | None = None
        self.mask: Callable[[str], str] = str
        """The run's scrubber (set by the agent once it exists): a result is masked whole before
        it is cut to the tool-output limit, so a cut cannot keep most of a secret."""

    @property
    def secrets(self) -> tuple[str, ...]:
        """The servers' env values treated as secrets (for the session's scrubber)."""
        return tuple(self._secrets)

    def scrub(self, text: str) -> str:
        """``text`` with every server env value replaced by ``***``."""
        return scrub(text, self._secrets)

    async def specs(self) -> list[ToolSpec]:
        """Every server's tools (servers are started on the first call)."""
        if not self.servers:
            return []
        loop = asyncio.get_running_loop()
        if self._starting is None or self._loop is not loop:
            # A new event loop (a new asyncio.run) cannot use servers owned by the old one.
            self._loop, self._running, self._tools, self._specs = loop, [], {}, []
            self._starting = asyncio.create_task(self._start_all())
        try:
            await asyncio.shield(self._starting)
        except ExecutionError as exc:
            raise ExecutionError(self.scrub(str(exc))) from None
        return list(self._specs)

    async def _start_all(self) -> None:
        servers = [
            StdioServer(spec, task_name=f"pytest-omk-agent-mcp-{spec.name}", start_timeout=START_TIMEOUT)
            for spec in self.servers
        ]
        self._running = servers
        await asyncio.gather(*(s.start() for s in servers))
        for server in servers:
            if server.client is None:
                raise ExecutionError(f"MCP server {server.spec.name!r} {server.error or 'is not running'}")
            try:
                async with asyncio.timeout(START_TIMEOUT):
                    listing = await server.client.list_tools()
            except Exception as exc:
                raise ExecutionError(
                    f"MCP server {server.spec.name!r}: tools/list failed ({describe_error(exc)})"
                ) from None
            for tool in listing.tools:
                offered = _UNSAFE_NAME.sub("_", mcp_tool_name(server.spec.name, tool.name))[:64]
                schema = tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object"}
                self._tools[offered] = (server, tool.name)
                self._specs.append(
                    ToolSpec(offered, tool.description or f"{tool.name} ({server.spec.name})", schema)
                )

    def serves(self, name: str) -> bool:
        """Whether ``name`` is one of the offered MCP tools."""
        return name in self._tools

    async def call(self, name: str, arguments: Any) -> ToolResult:
        """Call the MCP tool offered as ``name``; failures are failed results, never exceptions."""
        server, tool = self._tools[name]
        if server.client is None:
            return ToolResult.failed(f"MCP server {server.spec.name!r} is not running")
        if not isinstance(arguments, dict):
            return ToolResult.failed(f"{name}: the arguments must be a JSON object")
        try:
            async with asyncio.timeout(self.timeout):
                result = await server.client.call_tool(tool, arguments, read_timeout_seconds=self.timeout)
        except TimeoutError:
            return ToolResult.failed(f"[omk-agent] {name} timed out after {self.timeout:g} s")
        except Exception as exc:
            return ToolResult.failed(self.scrub(f"{name} failed: {describe_error(exc)}"))
        data = result.model_dump(by_alias=True, mode="json")
        text = truncate(self.mask(self.scrub(result_text(data))))
        return ToolResult.failed(text) if data.get("isError") is True else ToolResult(text)

    async def aclose(self) -> None:
        """Stop every server started (their processes are gone when this returns)."""
        starting, self._starting = self._starting, None
        if starting is not None and not starting.done():
            starting.cancel()
            with contextlib.suppress(BaseException):
                await starting
        running, self._running, self._tools, self._specs = self._running, [], {}, []
        if self._loop is asyncio.get_running_loop():
            await asyncio.gather(*(s.stop() for s in running), return_exceptions=True)
