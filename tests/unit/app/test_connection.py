"""The gateway's connections: a cap that makes room by closing idle ones, and deadlines."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator

import pytest

from pytest_omk.app.messages import HttpRequest, HttpResponse, Limits
from pytest_omk.app.server import LoopbackServer

FULL = b"GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


@pytest.fixture
def serve() -> Iterator[Callable[[Limits], LoopbackServer]]:
    started: list[LoopbackServer] = []

    async def ok(request: HttpRequest) -> HttpResponse:
        return HttpResponse(200, b"ok")

    def start(limits: Limits) -> LoopbackServer:
        server = LoopbackServer(ok, limits=limits)
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def until(condition: Callable[[], bool]) -> None:
    """Wait for an event of the server's loop (counted, not timed: the bound only stops a hang)."""
    for _ in range(1000):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError("the server never got there")


def connect(server: LoopbackServer, data: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(data)
    return sock


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_at_the_cap_the_longest_waiting_connection_makes_room(
    serve: Callable[[Limits], LoopbackServer],
) -> None:
    server = serve(Limits(connections=2))
    first = connect(server, b"POST / HTTP/1.1\r\nHost: x\r\n")  # half a head
    until(lambda: len(server.pool.waiting) == 1)
    second = connect(server, b"POST / HTTP/1.1\r\n")
    until(lambda: len(server.pool.waiting) == 2)
    third = connect(server, FULL)
    assert read_all(third).endswith(b"\r\n\r\nok")  # served
    assert read_all(first) == b""  # closed to make room: it had waited longest
    second.sendall(b"Host: x\r\nConnection: close\r\n\r\n")
    assert read_all(second).endswith(b"\r\n\r\nok")
    for sock in (first, second, third):
        sock.close()


def test_a_flood_never_holds_more_sockets_than_the_cap_and_the_newcomer(
    serve: Callable[[Limits], LoopbackServer],
) -> None:
    # 200 half-open connections as fast as they connect (the kernel queues them): asyncio's own
    # server accepted up to a hundred in one turn and held them all while it closed others to make
    # room; this one accepts the next only once a socket is given back.
    server = serve(Limits(connections=4))
    flood = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(200)]
    for sock in flood:
        with contextlib.suppress(OSError):  # closed already to make room
            sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
    # Every one of them was accepted in turn, each making room for the next ...
    until(lambda: server.accepted == 200)
    # ... and a real request after the flood is still served.
    last = connect(server, FULL)
    assert read_all(last).endswith(b"\r\n\r\nok")
    assert server.accepted == 201
    assert server.sockets_at_most <= 5
    for sock in [*flood, last]:
        sock.close()


def test_a_head_never_finished_is_given_up_on(serve: Callable[[Limits], LoopbackServer]) -> None:
    server = serve(Limits(connections=8, head_seconds=0.1))
    sock = connect(server, b"POST / HTTP/1.1\r\nHost: x\r\n")
    assert read_all(sock) == b""  # closed by the server (the socket's own timeout is 10 s)
    sock.close()


def test_a_body_never_finished_and_an_idle_connection_are_given_up_on(
    serve: Callable[[Limits], LoopbackServer],
) -> None:
    server = serve(Limits(connections=8, body_seconds=0.1, idle_seconds=0.1))
    partial = connect(server, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
    assert read_all(partial) == b""
    idle = connect(server, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert read_all(idle).endswith(b"\r\n\r\nok")  # answered, kept alive, then closed when idle
    for sock in (partial, idle):
        sock.close()
