"""The gateway's connections: strict HTTP/1.1 under a cap on connections and deadlines.

The reader and writer are this module's own, kept small and strict rather than h11's: measured
with ``benchmarks/gateway.py``, h11 took the gateway's CPU per call over the socket from about 275
to 485 µs (+75 %; the budget for this change was 10 %), while what it would guard against is a short
list, each refused here and tested:

- a head over 64 KiB (431) or never finished (closed after ``head_seconds``);
- a request line that is not ``TOKEN SP visible-ASCII SP HTTP/1.x``, a header name that is not a
  token, a value holding CR, LF or another control character, a folded line (400);
- an ambiguous body: ``transfer-encoding`` other than ``chunked``, or with ``content-length``, or a
  ``content-length`` that is not one number (400; no request smuggling past the gateway);
  chunks framed by anything but ``HEX[;ext] CRLF data CRLF`` (400);
- on the way out, a header holding a control character (a 500 instead, see ``messages.written``).

What the server adds: a request's head goes to its guard before a byte of the body is read (a
refusal is sent and the connection closed); a body must arrive within ``body_seconds`` and a kept-
alive connection must send its next head within ``idle_seconds``; at the cap on open connections
the one that has waited longest for a head (half-sent or idle) is closed to make room, and when
every one is busy with a request the newcomer gets a 503 and the server is told (the gateway makes
it the open samples' error). No pytest here.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from http import HTTPStatus
from typing import Protocol

from pytest_omk.app.messages import MAX_BODY_BYTES, HttpRequest, HttpResponse, Limits, written

_SAFE = {"content-type": "text/plain; charset=utf-8"}
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_TARGET = re.compile(rb"[\x21-\x7e]+")
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_CHUNK = re.compile(rb"([0-9A-Fa-f]{1,8})(;[^\r\n]*)?\r\n")
_MAX_TRAILERS = 32


class BadRequest(Exception):
    """A request this server will not read: answered with ``status`` and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Server(Protocol):
    """What a connection needs of its server (:class:`~pytest_omk.app.server.LoopbackServer`)."""

    limits: Limits

    def refusal(self, request: HttpRequest) -> HttpResponse | None:
        """The answer refusing a request by its head, or ``None``."""

    async def respond(self, request: HttpRequest, *, guarded: bool = False) -> HttpResponse:
        """The answer to a whole request."""

    def track(self, task: asyncio.Task[None], *, opened: bool) -> None:
        """A connection opened or ended."""

    def turned_away(self, message: str) -> None:
        """A connection was refused: every allowed one is busy."""


class Connections:
    """The open connections of one server, and which of them wait for a head (since when)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.waiting: dict[asyncio.Task[None], float] = {}
        self.open: set[asyncio.Task[None]] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection until it closes."""
        task = asyncio.current_task()
        assert task is not None
        if not self._room():
            message = (
                f"pytest-omk's model gateway is saturated: {len(self.open)} requests are in progress, its cap"
            )
            self.server.turned_away(message)
            with contextlib.suppress(Exception):
                await _send(writer, HttpResponse(503, message.encode(), _SAFE), keep=False)
            writer.close()
            return
        self.open.add(task)
        self.server.track(task, opened=True)
        try:
            deadline = self.server.limits.head_seconds
            while await self._one(task, reader, writer, deadline):
                deadline = self.server.limits.idle_seconds
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self.waiting.pop(task, None)
            self.open.discard(task)
            self.server.track(task, opened=False)
            writer.close()

    def _room(self) -> bool:
        """Whether a new connection may be served, closing the longest-waiting idle one if need be."""
        if len(self.open) < self.server.limits.connections:
            return True
        if not self.waiting:
            return False
        oldest = min(self.waiting, key=self.waiting.__getitem__)
        self.waiting.pop(oldest)
        self.open.discard(oldest)  # counted out now: its ``finally`` runs on the next turn
        oldest.cancel()
        return True

    async def _one(
        self,
        task: asyncio.Task[None],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        deadline: float,
    ) -> bool:
        """Serve one request; ``False`` when the connection is to be closed."""
        self.waiting[task] = asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(deadline):
                raw = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False  # the client closed between requests
        except asyncio.LimitOverrunError:
            return await _refuse(writer, reader, BadRequest(431, "request head too large"))
        finally:
            self.waiting.pop(task, None)
        try:
            head, version = parse_head(raw)
        except BadRequest as exc:
            return await _refuse(writer, reader, exc)
        refused = self.server.refusal(head)
        if refused is not None:
            await _send(writer, refused, keep=False)
            return False
        try:
            async with asyncio.timeout(self.server.limits.body_seconds):
                if head.headers.get("expect", "").lower() == "100-continue":
                    writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                body = await _read_body(reader, head.headers)
        except BadRequest as exc:
            return await _refuse(writer, reader, exc)
        answer = await self.server.respond(
            HttpRequest(head.method, head.target, head.headers, body), guarded=True
        )
        keep = version == b"HTTP/1.1" and head.headers.get("connection", "").lower() != "close"
        await _send(writer, answer, keep=keep)
        return keep


def parse_head(raw: bytes) -> tuple[HttpRequest, bytes]:
    """The request a head (ending with its blank line) asks for, and its HTTP version."""
    lines = raw[:-4].split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or not _TARGET.fullmatch(parts[1]):
        raise BadRequest(400, "not an HTTP/1.x request line")
    if parts[2] not in (b"HTTP/1.1", b"HTTP/1.0"):
        raise BadRequest(400, "not an HTTP/1.x request line")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not _TOKEN.fullmatch(name) or _CONTROL.search(value):
            raise BadRequest(400, "malformed header line")
        key, text = name.decode("ascii").lower(), value.strip(b" \t").decode("latin-1")
        # Repeated headers are joined as HTTP allows (a repeated content-length then fails below).
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    framing = headers.get("transfer-encoding")
    if framing is not None and (framing.lower() != "chunked" or "content-length" in headers):
        raise BadRequest(400, "a body must be framed by content-length or chunked, not both")
    if not headers.get("content-length", "0").isdigit():
        raise BadRequest(400, "content-length is not one number")
    request = HttpRequest(parts[0].decode("ascii").upper(), parts[1].decode("ascii"), headers, b"")
    return request, parts[2]


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "transfer-encoding" in headers:
        return await _read_chunked(reader)
    length = int(headers.get("content-length") or 0)
    if length > MAX_BODY_BYTES:
        raise BadRequest(413, f"request body over {MAX_BODY_BYTES} bytes")
    return await reader.readexactly(length) if length else b""


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        framed = _CHUNK.fullmatch(await reader.readuntil(b"\r\n"))
        if framed is None:
            raise BadRequest(400, "malformed chunk size")
        size = int(framed.group(1), 16)
        if size == 0:
            for _ in range(_MAX_TRAILERS):  # trailers, if any, end with an empty line
                if await reader.readuntil(b"\r\n") == b"\r\n":
                    return bytes(body)
            raise BadRequest(400, "too many trailer lines")
        if len(body) + size > MAX_BODY_BYTES:
            raise BadRequest(413, f"request body over {MAX_BODY_BYTES} bytes")
        body += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise BadRequest(400, "a chunk does not end where its size says")


async def _refuse(writer: asyncio.StreamWriter, reader: asyncio.StreamReader, exc: BadRequest) -> bool:
    """Answer a request that cannot be read, then read (and drop) what the client still sends,
    briefly: closing with unread bytes would reset the connection and lose the answer. The write
    side is shut first (a lingering close): a client reading to the end of the answer sees it end
    now and closes, which ends the reading here, rather than both sides waiting out the second."""
    await _send(writer, HttpResponse(exc.status, str(exc).encode(), _SAFE), keep=False)
    with contextlib.suppress(Exception):
        if writer.can_write_eof():
            writer.write_eof()
        async with asyncio.timeout(1.0):
            for _ in range(64):
                if not await reader.read(65536):
                    break
    return False


async def _send(writer: asyncio.StreamWriter, response: HttpResponse, *, keep: bool) -> None:
    response = written(response)  # no header holding CR, LF or a control character is ever written
    lines = [f"HTTP/1.1 {response.status} {_reason(response.status)}"]
    lines.extend(
        f"{name}: {value}" for name, value in response.headers.items() if name.lower() not in _FRAMING
    )
    lines.append(f"content-length: {len(response.body)}")
    lines.append("connection: keep-alive" if keep else "connection: close")
    # One write: headers and body in separate segments would meet Nagle and delayed ACKs.
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + response.body)
    await writer.drain()


_FRAMING = frozenset({"content-length", "connection", "transfer-encoding"})


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Status"
