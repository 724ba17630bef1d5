"""Fetch URLs through configured MCP servers (stdio), for documents safe HTTP may not reach.

Each server is started once per run, lazily, when the first URL matching its ``urlPatterns``
needs it, and :meth:`McpResolver.aclose` stops them all. The ``mcp`` SDK is imported only then.

Every client lives in its own owner task: the SDK's transport is built on anyio task groups, which
must be entered and left by the same task, while fetches come from many sample tasks and the close
comes from the run's teardown. Fetch tasks only send requests through the connected client.

Server ``env`` values are usually tokens: they go to the subprocess only, and are scrubbed from
every message this module produces (the server's stderr goes to a temporary file, not the
terminal, for the same reason).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Iterable
from typing import IO, Any

from pytest_omk.resolve.mcp_config import McpError, McpServerConfig, result_content, tool_arguments

__all__ = ["McpError", "McpResolver"]

_STOP_TIMEOUT = 10.0
"""Upper bound on closing one server; the SDK's own shutdown steps are bounded well below it."""


class _Connection:
    """One running server, owned by a dedicated task until :meth:`stop`."""

    def __init__(self, server: McpServerConfig, timeout: float) -> None:
        self.server = server
        self.timeout = timeout
        self._client: Any = None
        self._error: str | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._own(), name=f"pytest-omk-mcp-{self.server.name}")
        try:
            async with asyncio.timeout(self.timeout):
                await self._ready.wait()
        except TimeoutError:
            self._error = f"did not start within {self.timeout:g} s"
            self._task.cancel()  # still inside the handshake: waiting for a polite stop is pointless
            with contextlib.suppress(BaseException):
                await self._task

    async def _own(self) -> None:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        # The format owner merges env over the inherited environment (the SDK default would pass
        # only a few safe variables, which breaks servers that need their usual setup).
        params = StdioServerParameters(
            command=self.server.command, args=list(self.server.args), env={**os.environ, **self.server.env}
        )
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as stderr:
            try:
                async with Client(stdio_client(params, errlog=stderr)) as client:
                    self._client = client
                    self._ready.set()
                    await self._stop.wait()
            except Exception as exc:  # reported by call(); the HTTP fallback runs next
                if not self._ready.is_set():
                    self._error = f"could not be started ({_describe(exc)}){_tail(stderr)}"
            finally:
                self._client = None
                self._ready.set()

    async def call(self, url: str) -> str:
        if self._client is None:
            raise McpError(f"the server {self._error or 'is not running'}")
        tool = self.server.fetch_tool
        arguments = tool_arguments(tool, url)
        try:
            async with asyncio.timeout(self.timeout):
                result = await self._client.call_tool(tool.name, arguments, read_timeout_seconds=self.timeout)
                payload = result.model_dump(by_alias=True, mode="json")
        except TimeoutError:
            raise McpError(f"tool {tool.name!r} did not answer within {self.timeout:g} s") from None
        except Exception as exc:
            raise McpError(f"tool {tool.name!r} failed ({_describe(exc)})") from None
        return result_content(payload, tool)

    async def stop(self) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            try:
                async with asyncio.timeout(_STOP_TIMEOUT):
                    await asyncio.shield(task)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task


def _describe(exc: BaseException) -> str:
    """``Type: message`` of the first real error inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}".removesuffix(": ")


def _tail(stderr: IO[str]) -> str:
    """The end of a server's stderr, for a startup error (scrubbed of env values by the caller)."""
    with contextlib.suppress(OSError, ValueError):
        stderr.flush()
        stderr.seek(0)
        tail = stderr.read()[-500:].strip()
        if tail:
            return f"; its stderr ends with: {tail}"
    return ""


class McpResolver:
    """Starts resolver servers on demand and calls their fetch tool; one instance per run."""

    def __init__(self, servers: Iterable[McpServerConfig], *, timeout: float = 30.0) -> None:
        self.servers = tuple(servers)
        self.timeout = timeout
        self._connections: dict[str, _Connection] = {}
        self._starting: dict[str, asyncio.Task[_Connection]] = {}
        # Every env value of every server, longest first, so a token is never shown in part.
        self._secrets = sorted(
            {v for s in self.servers for v in s.env.values() if len(v) >= 3}, key=len, reverse=True
        )

    async def fetch(self, server: McpServerConfig, url: str) -> str:
        """The text the server's fetch tool returns for ``url``; :class:`McpError` says why not."""
        try:
            connection = await self._connection(server)
            return await connection.call(url)
        except McpError as exc:
            raise McpError(self.scrub(str(exc))) from None

    async def aclose(self) -> None:
        """Stop every server started (their processes are gone when this returns)."""
        for task in self._starting.values():
            if not task.done():
                task.cancel()
        connections, self._connections, self._starting = list(self._connections.values()), {}, {}
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)

    def scrub(self, text: str) -> str:
        """``text`` with every server env value replaced by ``***``."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    async def _connection(self, server: McpServerConfig) -> _Connection:
        task = self._starting.get(server.name)
        if task is None:
            # One start per server however many fetches ask at once: they all await this task.
            task = asyncio.create_task(self._start(server))
            self._starting[server.name] = task
        return await asyncio.shield(task)

    async def _start(self, server: McpServerConfig) -> _Connection:
        connection = _Connection(server, self.timeout)
        self._connections[server.name] = connection
        await connection.start()
        return connection
