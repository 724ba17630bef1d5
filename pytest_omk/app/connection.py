"""The gateway's connections: HTTP/1.1 spoken by h11, under a cap and deadlines.

h11 parses each request sans-IO (it bounds an incomplete head, refuses CR, LF and controls in
header names and values, and speaks chunked bodies and ``Expect: 100-continue``) and writes each
answer, refusing a header it could not write safely. What this module adds is the server's part:

- a request's head goes to the server's guard before a byte of its body is read; a refusal is sent
  and the connection closed;
- deadlines: a new connection must send its first head within ``head_seconds``, a body must arrive
  within ``body_seconds``, a kept-alive connection its next head within ``idle_seconds``;
- a cap on open connections: when it is reached, the connection that has waited longest for a head
  (half-sent or idle) is closed to make room, since it holds nothing; when every connection is busy
  with a request, the newcomer gets a 503 saying so and the server is told (the gateway makes it
  the open samples' error). A flood of connections therefore never takes the descriptors the rest
  of the run needs. No pytest here.
"""

from __future__ import annotations

import asyncio
import contextlib
from http import HTTPStatus
from typing import Protocol

import h11

from pytest_omk.app.messages import MAX_BODY_BYTES, MAX_HEAD_BYTES, HttpRequest, HttpResponse, Limits

_READ = 65536
_SAFE = {"content-type": "text/plain; charset=utf-8"}


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


class _Closed(Exception):
    """The connection is to be closed (its peer left, a deadline passed, a refusal was sent)."""


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
                writer.write(
                    _bytes(h11.Connection(h11.SERVER), HttpResponse(503, message.encode(), _SAFE), False)
                )
                await writer.drain()
            writer.close()
            return
        self.open.add(task)
        self.server.track(task, opened=True)
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        try:
            deadline = self.server.limits.head_seconds
            while await self._one(task, conn, reader, writer, deadline):
                conn.start_next_cycle()
                deadline = self.server.limits.idle_seconds
        except (_Closed, ConnectionError, TimeoutError, h11.ProtocolError, asyncio.CancelledError):
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
        conn: h11.Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        deadline: float,
    ) -> bool:
        """Serve one request; ``False`` when the connection is to be closed."""
        self.waiting[task] = asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(deadline):
                event = await _event(conn, reader)
        except h11.RemoteProtocolError as exc:
            await _send(
                writer, conn, HttpResponse(exc.error_status_hint, b"unreadable request", _SAFE), False
            )
            await _linger(reader)
            return False
        finally:
            self.waiting.pop(task, None)
        if not isinstance(event, h11.Request):
            return False  # the client closed between requests
        head = HttpRequest(
            event.method.decode("ascii").upper(), event.target.decode("ascii"), _headers(event), b""
        )
        refused = self.server.refusal(head)
        if refused is not None:
            await _send(writer, conn, refused, False)
            return False
        if _declared_length(head) > MAX_BODY_BYTES:
            await _send(
                writer, conn, HttpResponse(413, f"request body over {MAX_BODY_BYTES} bytes".encode()), False
            )
            return False
        body = await _body(conn, reader, writer, self.server.limits.body_seconds)
        if body is None:
            return False
        answer = await self.server.respond(
            HttpRequest(head.method, head.target, head.headers, body), guarded=True
        )
        keep = conn.their_http_version == b"1.1" and head.headers.get("connection", "").lower() != "close"
        await _send(writer, conn, answer, keep)
        return keep and conn.our_state is h11.DONE and conn.their_state is h11.DONE


async def _event(conn: h11.Connection, reader: asyncio.StreamReader) -> object:
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            return event
        conn.receive_data(await reader.read(_READ))


async def _body(
    conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seconds: float
) -> bytes | None:
    """The request's body (``None``: refused or cut short, and answered if it can be)."""
    if conn.they_are_waiting_for_100_continue:
        writer.write(
            conn.send(h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue")) or b""
        )
    body = bytearray()
    try:
        async with asyncio.timeout(seconds):
            while True:
                event = await _event(conn, reader)
                if isinstance(event, h11.Data):
                    body += event.data
                    if len(body) > MAX_BODY_BYTES:
                        raise _TooLarge
                elif isinstance(event, h11.EndOfMessage):
                    return bytes(body)
                else:
                    return None
    except _TooLarge:
        await _send(
            writer, conn, HttpResponse(413, f"request body over {MAX_BODY_BYTES} bytes".encode()), False
        )
    except h11.RemoteProtocolError as exc:
        await _send(
            writer, conn, HttpResponse(exc.error_status_hint, b"unreadable request body", _SAFE), False
        )
    return None


async def _linger(reader: asyncio.StreamReader) -> None:
    """Read (and drop) what the client still sends, briefly: closing with unread bytes would reset
    the connection and lose the error answer on its way."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(1.0):
            for _ in range(64):
                if not await reader.read(_READ):
                    return


class _TooLarge(Exception):
    pass


def _declared_length(head: HttpRequest) -> int:
    # h11 has checked it is a number already.
    return int(head.headers.get("content-length") or 0)


def _headers(event: h11.Request) -> dict[str, str]:
    # Names in lower case (h11 gives them so); repeats joined as HTTP allows.
    headers: dict[str, str] = {}
    for name, value in event.headers:
        key, text = name.decode("latin-1"), value.decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


async def _send(
    writer: asyncio.StreamWriter, conn: h11.Connection, response: HttpResponse, keep: bool
) -> None:
    # One write: headers and body in separate segments would meet Nagle and delayed ACKs.
    writer.write(_bytes(conn, response, keep))
    await writer.drain()


def _bytes(conn: h11.Connection, response: HttpResponse, keep: bool) -> bytes:
    """The answer on the wire; h11 refuses a header that would not be one (CR, LF, controls)."""
    skip = {"content-length", "connection", "transfer-encoding"}
    headers = [(k, v) for k, v in response.headers.items() if k.lower() not in skip]
    headers += [
        ("content-length", str(len(response.body))),
        ("connection", "keep-alive" if keep else "close"),
    ]
    try:
        head = conn.send(
            h11.Response(status_code=response.status, headers=headers, reason=_reason(response.status))
        )
    except h11.LocalProtocolError:
        raise _Closed from None
    return (
        (head or b"")
        + (conn.send(h11.Data(data=response.body)) or b"" if response.body else b"")
        + (conn.send(h11.EndOfMessage()) or b"")
    )


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b"Status"
