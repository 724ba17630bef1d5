"""Tools served by MCP servers, offered to the agent as ``mcp__<server>__<tool>``.

The servers are the ``mcpServers`` entries with a ``command`` (stdio transport; ``args`` and
``env`` optional) in the MCP config: ``--omk-mcp-config``, else ``.mcp.json`` at the rootdir.
They are started once per run, when the first agent run needs its tools, and stopped by
:meth:`McpTools.aclose`. The ``mcp`` SDK is imported only then.

``env`` values are usually tokens. They reach the server process only: every tool result is
scrubbed of them before the model (and so the trace, recordings and reports) sees it, and so is
every error message. A server's stderr goes to a temporary file rather than the terminal.

The SDK's stdio transport is built on anyio task groups, which must be entered and left by one
task; each server therefore lives in its own owner task, and tool calls only send requests
through the connected client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_omk.agent.names import mcp_tool_name
from pytest_omk.agent.tools import ToolResult, ToolSpec, truncate
from pytest_omk.errors import ConfigError, ExecutionError

START_TIMEOUT = 30.0
MIN_SECRET_LENGTH = 8
"""Shorter env values (``1``, ``true``, ``info``) are settings, not tokens: scrubbing them would
mangle ordinary tool output."""
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class McpServerSpec:
    """How to start one stdio MCP server."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)


def find_mcp_config(rootdir: Path, explicit: str | Path | None) -> Path | None:
    """``explicit`` (relative to ``rootdir``; must exist), else ``<rootdir>/.mcp.json`` if present."""
    if explicit:
        path = Path(explicit)
        path = path if path.is_absolute() else rootdir / path
        if not path.is_file():
            raise ConfigError(f"--omk-mcp-config: {path} does not exist")
        return path
    candidate = rootdir / ".mcp.json"
    return candidate if candidate.is_file() else None


def load_mcp_servers(path: Path) -> list[McpServerSpec]:
    """The stdio servers of an MCP config file (entries without ``command`` are skipped)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError) as exc:
        raise ConfigError(f"MCP config {path}: cannot be read as JSON ({exc})") from None
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f"MCP config {path}: expected an object with an mcpServers object")
    specs = []
    for name, entry in servers.items():
        if not isinstance(entry, dict) or "command" not in entry:
            continue  # HTTP/SSE servers and comments: not served to the agent
        where = f"MCP config {path}: mcpServers.{name}"
        command, args, env = entry.get("command"), entry.get("args", []), entry.get("env", {})
        if not isinstance(command, str) or not command.strip():
            raise ConfigError(f"{where}.command must be a non-blank string")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"{where}.args must be an array of strings")
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise ConfigError(f"{where}.env must map names to strings")
        specs.append(McpServerSpec(str(name), command, tuple(args), dict(env)))
    return specs


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}".removesuffix(": ")


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


class _Server:
    """One running server, owned by a dedicated task until :meth:`stop`."""

    def __init__(self, spec: McpServerSpec) -> None:
        self.spec = spec
        self.client: Any = None
        self.error: str | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._own(), name=f"pytest-omk-agent-mcp-{self.spec.name}")
        try:
            async with asyncio.timeout(START_TIMEOUT):
                await self._ready.wait()
        except TimeoutError:
            self.error = f"did not start within {START_TIMEOUT:g} s"
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    async def _own(self) -> None:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        # env is merged over the inherited environment, as the format's owner does.
        params = StdioServerParameters(
            command=self.spec.command, args=list(self.spec.args), env={**os.environ, **self.spec.env}
        )
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as stderr:
            try:
                async with Client(stdio_client(params, errlog=stderr)) as client:
                    self.client = client
                    self._ready.set()
                    await self._stop.wait()
            except Exception as exc:
                if not self._ready.is_set():
                    self.error = f"could not be started ({_describe(exc)})"
            finally:
                self.client = None
                self._ready.set()

    async def stop(self) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            try:
                async with asyncio.timeout(10):
                    await asyncio.shield(task)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task


class McpTools:
    """The tools of the configured MCP servers, started on first use (one instance per run)."""

    def __init__(self, servers: Sequence[McpServerSpec], *, timeout: float) -> None:
        self.servers = tuple(servers)
        self.timeout = timeout
        self._secrets = sorted(
            {v for s in self.servers for v in s.env.values() if len(v) >= MIN_SECRET_LENGTH},
            key=len,
            reverse=True,
        )
        self._running: list[_Server] = []
        self._tools: dict[str, tuple[_Server, str]] = {}
        self._specs: list[ToolSpec] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._starting: asyncio.Task[None] | None = None

    def scrub(self, text: str) -> str:
        """``text`` with every server env value replaced by ``***``."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

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
        servers = [_Server(spec) for spec in self.servers]
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
                    f"MCP server {server.spec.name!r}: tools/list failed ({_describe(exc)})"
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
            return ToolResult.failed(self.scrub(f"{name} failed: {_describe(exc)}"))
        data = result.model_dump(by_alias=True, mode="json")
        text = truncate(self.scrub(result_text(data)))
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
