"""Fetch URLs through configured MCP servers (stdio), for documents safe HTTP may not reach.

Each server is started once per run, lazily, when the first URL matching its ``urlPatterns``
needs it, and :meth:`McpResolver.aclose` stops them all. The ``mcp`` SDK is imported only then.

Every client lives in its own owner task (a :class:`~pytest_omk.resolve.mcp_servers.StdioServer`): the
SDK's transport is built on anyio task groups, which must be entered and left by the same task,
while fetches come from many sample tasks and the close comes from the run's teardown. Fetch tasks
only send requests through the connected client.

Server ``env`` values are usually tokens: they go to the subprocess only, and are scrubbed from
every message this module produces (the server's stderr goes to a temporary file, not the
terminal, for the same reason).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from pytest_omk.resolve.mcp_config import McpError, McpServerConfig, result_content, tool_arguments
from pytest_omk.resolve.mcp_servers import StdioServer, describe_error, env_secrets, scrub

__all__ = ["McpError", "McpResolver"]


class _Connection:
    """One running resolver server and its fetch tool."""

    def __init__(self, server: McpServerConfig, timeout: float) -> None:
        self.server = server
        self.timeout = timeout
        self._process = StdioServer(
            server, task_name=f"pytest-omk-mcp-{server.name}", start_timeout=timeout, stderr_in_error=True
        )

    async def start(self) -> None:
        await self._process.start()

    async def call(self, url: str) -> str:
        client = self._process.client
        if client is None:
            raise McpError(f"the server {self._process.error or 'is not running'}")
        tool = self.server.fetch_tool
        arguments = tool_arguments(tool, url)
        try:
            async with asyncio.timeout(self.timeout):
                result = await client.call_tool(tool.name, arguments, read_timeout_seconds=self.timeout)
                payload = result.model_dump(by_alias=True, mode="json")
        except TimeoutError:
            raise McpError(f"tool {tool.name!r} did not answer within {self.timeout:g} s") from None
        except Exception as exc:
            raise McpError(f"tool {tool.name!r} failed ({describe_error(exc)})") from None
        return result_content(payload, tool)

    async def stop(self) -> None:
        await self._process.stop()


class McpResolver:
    """Starts resolver servers on demand and calls their fetch tool; one instance per run."""

    def __init__(self, servers: Iterable[McpServerConfig], *, timeout: float = 30.0) -> None:
        self.servers = tuple(servers)
        self.timeout = timeout
        self._connections: dict[str, _Connection] = {}
        self._starting: dict[str, asyncio.Task[_Connection]] = {}
        # Every env value of every server, longest first, so a token is never shown in part.
        self._secrets = env_secrets(self.servers, 3)

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
        return scrub(text, self._secrets)

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
