"""A small HTTP/1.1 server on 127.0.0.1, with its own event loop on a daemon thread.

What the model gateway (:mod:`pytest_omk.app.gateway`) listens with. It reads what model
clients send (a request line, headers, a body by ``content-length`` or chunked), keeps
connections alive as SDK clients expect, and hands each request to an async handler. Its loop is
its own, not the call loop's: an ``async`` app that calls a blocking client would otherwise stop
the very loop that must answer it. No pytest here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, TypeVar

T = TypeVar("T")

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
"""Largest request body read (an image or audio upload fits; more is refused with 413)."""


@dataclass(frozen=True)
class HttpRequest:
    """One request as a client sent it (header names in lower case)."""

    method: str
    target: str
    """The path and query (``/_/openai/v1/chat/completions?x=1``)."""
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class HttpResponse:
    """What the handler answers; ``content-length`` and ``connection`` are added when sent."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]
Quick = Callable[[HttpRequest], HttpResponse | None]
"""An answer made on the caller's thread (a replay), or ``None`` to leave the call to the loop."""


class BadRequest(Exception):
    """A request this server cannot read: answered with ``status`` and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class LoopbackServer:
    """Serves ``handler`` on ``127.0.0.1`` (port chosen by the system) until :meth:`stop`."""

    def __init__(
        self, handler: Handler, *, quick: Quick | None = None, name: str = "pytest-omk-gateway"
    ) -> None:
        self._handler = handler
        self._quick = quick
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.port = 0
        self.accepted = 0
        """Connections accepted so far (requests answered in process open none)."""

    def start(self) -> int:
        """Bind and serve; returns the port."""
        self._thread.start()
        self._server = self.run(asyncio.start_server(self._serve, "127.0.0.1", 0, limit=MAX_HEAD_BYTES))
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the server's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the server's loop."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def stop(self, cleanup: Coroutine[Any, Any, None] | None = None) -> None:
        """Close the listener and every connection, run ``cleanup``, end the thread."""
        if not self._thread.is_alive():
            if cleanup is not None:
                cleanup.close()
            return

        async def shut() -> None:
            if self._server is not None:
                self._server.close()
            tasks = list(self._connections)
            for task in tasks:
                task.cancel()
            # Let them run their ``finally`` (closing their sockets) before the loop stops.
            await asyncio.gather(*tasks, return_exceptions=True)
            if cleanup is not None:
                with contextlib.suppress(Exception):
                    await cleanup

        with contextlib.suppress(Exception):
            self.submit(shut()).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._loop.is_running():
            self._loop.close()

    def respond_here(self, request: HttpRequest) -> HttpResponse | None:
        """The quick answer to ``request``, made on the caller's thread (a client in this process,
        see :mod:`~pytest_omk.app.in_process`); ``None``: :meth:`respond` must answer it."""
        if self._quick is None or len(request.body) > MAX_BODY_BYTES:
            return None
        try:
            return self._quick(request)
        except Exception:  # whatever went wrong, the loop's path answers it as it always did
            return None

    async def respond(self, request: HttpRequest) -> HttpResponse:
        """The handler's answer to ``request``; a handler bug is answered with a 500."""
        if len(request.body) > MAX_BODY_BYTES:
            return HttpResponse(413, f"request body over {MAX_BODY_BYTES} bytes".encode())
        try:
            return await self._handler(request)
        except Exception as exc:  # a bug must reach the app as an answer, not as a dropped connection
            return HttpResponse(500, f"pytest-omk gateway error: {type(exc).__name__}: {exc}".encode())

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self.accepted += 1
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; ``False`` when the connection is to be closed."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False  # the client closed between requests
        except asyncio.LimitOverrunError:
            await _send(writer, HttpResponse(431, b"request head too large"), keep=False)
            return False
        try:
            method, target, version, headers = _parse_head(head)
            if headers.get("expect", "").lower() == "100-continue":
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = await _read_body(reader, headers)
        except BadRequest as exc:
            await _send(writer, HttpResponse(exc.status, str(exc).encode()), keep=False)
            return False
        response = await self.respond(HttpRequest(method, target, headers, body))
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        await _send(writer, response, keep=keep)
        return keep


def _parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    lines = head[:-4].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "not an HTTP/1.x request line")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequest(400, "malformed header line")
        name = name.strip().lower()
        value = value.strip()
        # Repeated headers are joined as HTTP allows (none that matters here is repeated).
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return parts[0].upper(), parts[1], parts[2], headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return await _read_chunked(reader)
    try:
        length = int(headers.get("content-length") or 0)
    except ValueError:
        raise BadRequest(400, "content-length is not a number") from None
    if length < 0 or length > MAX_BODY_BYTES:
        raise BadRequest(413, f"request body over {MAX_BODY_BYTES} bytes")
    return await reader.readexactly(length) if length else b""


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        except ValueError:
            raise BadRequest(400, "malformed chunk size") from None
        if size == 0:
            # Trailers, if any, end with an empty line.
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return bytes(body)
        if len(body) + size > MAX_BODY_BYTES:
            raise BadRequest(413, f"request body over {MAX_BODY_BYTES} bytes")
        body += await reader.readexactly(size)
        await reader.readexactly(2)


async def _send(writer: asyncio.StreamWriter, response: HttpResponse, *, keep: bool) -> None:
    reason = _reason(response.status)
    lines = [f"HTTP/1.1 {response.status} {reason}"]
    lines.extend(f"{name}: {value}" for name, value in response.headers.items())
    lines.append(f"content-length: {len(response.body)}")
    lines.append("connection: keep-alive" if keep else "connection: close")
    # One write: headers and body in separate segments would meet Nagle and delayed ACKs.
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + response.body)
    await writer.drain()


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Status"
