"""The loopback HTTP server the model gateway listens with: what clients send, it reads."""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator

import pytest

from pytest_omk.app.messages import HttpRequest, HttpResponse
from pytest_omk.app.server import LoopbackServer


@pytest.fixture
def server() -> Iterator[tuple[LoopbackServer, list[HttpRequest]]]:
    seen: list[HttpRequest] = []

    async def echo(request: HttpRequest) -> HttpResponse:
        seen.append(request)
        return HttpResponse(200, request.body or request.target.encode(), {"content-type": "text/plain"})

    running = LoopbackServer(echo)
    running.start()
    yield running, seen
    running.stop()


def raw(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_keep_alive_serves_many_requests_on_one_connection(
    server: tuple[LoopbackServer, list[HttpRequest]],
) -> None:
    running, seen = server
    connection = http.client.HTTPConnection("127.0.0.1", running.port, timeout=5)
    for i in range(3):
        connection.request("POST", f"/x?i={i}", body=f"body {i}".encode(), headers={"X-Thing": "1"})
        response = connection.getresponse()
        assert (response.status, response.read()) == (200, f"body {i}".encode())
    connection.close()
    assert [r.target for r in seen] == ["/x?i=0", "/x?i=1", "/x?i=2"]
    assert seen[0].headers["x-thing"] == "1" and seen[0].method == "POST"


def test_a_chunked_body_and_connection_close(server: tuple[LoopbackServer, list[HttpRequest]]) -> None:
    running, seen = server
    answer = raw(
        running.port,
        b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n",
    )
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and answer.endswith(b"\r\n\r\nhello world")
    assert b"connection: close" in answer.lower() and seen[0].body == b"hello world"


def test_expect_100_continue_is_answered(server: tuple[LoopbackServer, list[HttpRequest]]) -> None:
    running, _ = server
    answer = raw(
        running.port,
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\nok",
    )
    assert answer.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK")


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"NONSENSE\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n", b"413"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 200_000 + b"\r\n\r\n", b"431"),
        # What could smuggle a second request past the gateway, or split a header, is refused.
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nX-A: 1\nX-B: 2\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n folded\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nBad Name: a\r\n\r\n", b"400"),
        (b"POST /\x7f HTTP/1.1\r\nHost: x\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-2\r\nok\r\n0\r\n\r\n", b"400"),
    ],
)
def test_what_cannot_be_read_is_refused_and_the_connection_closed(
    server: tuple[LoopbackServer, list[HttpRequest]], request_bytes: bytes, status: bytes
) -> None:
    running, seen = server
    answer = raw(running.port, request_bytes)
    assert answer.split(b" ")[1] == status and b"connection: close" in answer
    assert seen == []


def test_stop_ends_open_connections(server: tuple[LoopbackServer, list[HttpRequest]]) -> None:
    running, _ = server
    sock = socket.create_connection(("127.0.0.1", running.port), timeout=5)
    sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")
    assert sock.recv(1000).endswith(b"\r\n\r\nok")  # the connection is being served now
    sock.sendall(
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\npart"
    )  # half a body: the task waits
    running.stop()
    assert sock.recv(100) == b""
    sock.close()
