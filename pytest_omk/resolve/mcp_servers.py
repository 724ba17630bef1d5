"""The MCP servers of an MCP config file (``--omk-mcp-config``, else ``.mcp.json`` at the rootdir).

Both the URL resolver (:mod:`pytest_omk.resolve.mcp_config`) and the agent's MCP tools
(:mod:`pytest_omk.agent.mcp_tools`) read the same file and start the same kind of server: a
``command`` with optional ``args`` and ``env``, spoken to over stdio. This module holds what they
share: finding and reading the file, validating an entry's launch fields, and running one server.

``env`` values are usually tokens: they reach the server process only, and :func:`scrub` removes
them from any text shown. A server's stderr goes to a temporary file rather than the terminal.

The SDK's stdio transport is built on anyio task groups, which must be entered and left by one
task; each :class:`StdioServer` therefore lives in its own owner task, and calls only send
requests through the connected client. The ``mcp`` SDK is imported only when a server starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pytest_omk.errors import ConfigError

STOP_TIMEOUT = 10.0
"""Upper bound on closing one server; the SDK's own shutdown steps are bounded well below it."""


@dataclass(frozen=True)
class McpServerSpec:
    """How to start one stdio MCP server."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Extra environment (often tokens): never logged, recorded or shown."""


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


def read_mcp_config(path: Path) -> Any:
    """The parsed JSON of an MCP config file; :class:`ConfigError` when it cannot be read."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError) as exc:
        raise ConfigError(f"MCP config {path}: cannot be read as JSON ({exc})") from None


def launch_fields(entry: Mapping[str, Any], where: str) -> tuple[str, tuple[str, ...], dict[str, str]]:
    """An entry's validated ``command``, ``args`` and ``env``; ``where`` names it in errors."""
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where}.command must be a non-blank string")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{where}.args must be an array of strings")
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ConfigError(f"{where}.env must map names to strings")
    return command, tuple(args), dict(env)


def env_secrets(servers: Iterable[McpServerSpec], min_length: int) -> list[str]:
    """Every server env value of at least ``min_length`` characters, longest first (so that a
    token is never shown in part)."""
    return sorted({v for s in servers for v in s.env.values() if len(v) >= min_length}, key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every one of ``secrets`` replaced by ``***``."""
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def describe_error(exc: BaseException) -> str:
    """``Type: message`` of the first real error inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}".removesuffix(": ")


def _stderr_tail(stderr: IO[str]) -> str:
    """The end of a server's stderr, for a startup error (scrubbed of env values by the caller)."""
    with contextlib.suppress(OSError, ValueError):
        stderr.flush()
        stderr.seek(0)
        tail = stderr.read()[-500:].strip()
        if tail:
            return f"; its stderr ends with: {tail}"
    return ""


class StdioServer:
    """One running server, owned by a dedicated task from :meth:`start` until :meth:`stop`.

    ``client`` is the connected SDK client (``None`` when not running) and ``error`` says why a
    start failed; ``stderr_in_error`` adds the end of the server's stderr to that reason.
    """

    def __init__(
        self, spec: McpServerSpec, *, task_name: str, start_timeout: float, stderr_in_error: bool = False
    ) -> None:
        self.spec = spec
        self.client: Any = None
        self.error: str | None = None
        self._task_name = task_name
        self._start_timeout = start_timeout
        self._stderr_in_error = stderr_in_error
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the owner task and wait until the server is connected, failed or timed out."""
        self._task = asyncio.create_task(self._own(), name=self._task_name)
        try:
            async with asyncio.timeout(self._start_timeout):
                await self._ready.wait()
        except TimeoutError:
            self.error = f"did not start within {self._start_timeout:g} s"
            self._task.cancel()  # still inside the handshake: waiting for a polite stop is pointless
            with contextlib.suppress(BaseException):
                await self._task

    async def _own(self) -> None:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        # The format owner merges env over the inherited environment (the SDK default would pass
        # only a few safe variables, which breaks servers that need their usual setup).
        params = StdioServerParameters(
            command=self.spec.command, args=list(self.spec.args), env={**os.environ, **self.spec.env}
        )
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as stderr:
            try:
                async with Client(stdio_client(params, errlog=stderr)) as client:
                    self.client = client
                    self._ready.set()
                    await self._stop.wait()
            except Exception as exc:  # reported by the caller through ``error``
                if not self._ready.is_set():
                    tail = _stderr_tail(stderr) if self._stderr_in_error else ""
                    self.error = f"could not be started ({describe_error(exc)}){tail}"
            finally:
                self.client = None
                self._ready.set()

    async def stop(self) -> None:
        """Ask the owner task to leave the client, and wait for it (cancelled after a bound)."""
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            try:
                async with asyncio.timeout(STOP_TIMEOUT):
                    await asyncio.shield(task)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
