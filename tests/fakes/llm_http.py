"""The HTTP plumbing of the fake model server: a threaded stdlib server and its request handler.

Only the stdlib is used, so the fake needs no dependency beyond what the tests already have.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Serve = Callable[["Handler", Any], None]


class Server(ThreadingHTTPServer):
    """A threaded HTTP server handing each parsed POST to ``serve(handler, body)``."""

    daemon_threads = True
    # socketserver's default backlog of 5 drops the SYNs of a burst of new connections (the client
    # then waits a second to retry), which looks like a timeout no fault was scripted for.
    request_queue_size = 128
    block_on_close = False  # a hanging handler must not hold up stop()

    def __init__(self, address: tuple[str, int], serve: Serve, stopping: threading.Event) -> None:
        super().__init__(address, Handler)
        self.serve = serve
        self.stopping = stopping
        self.accepted = 0
        """TCP connections accepted so far (how well clients keep their connections alive)."""

    def process_request(self, request: Any, client_address: Any) -> None:
        self.accepted += 1  # the serving thread alone accepts: no lock needed
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (timeouts, dropped faults) are part of the game, not errors.
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    """Reads a JSON POST and offers the ways of answering it, fair and foul."""

    # Headers and body go out as separate writes; with Nagle on, delayed ACKs add ~40 ms per call.
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"  # keep-alive, as real providers, so pooled connections are exercised
    server: Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.server.serve(self, body)

    def send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        """A complete JSON response."""
        self.send_bytes(status, json.dumps(payload).encode(), headers)

    def send_bytes(
        self, status: int, data: bytes, headers: Mapping[str, str] | None = None, *, chunk_delay: float = 0.0
    ) -> None:
        """A response with ``data`` as its body, optionally trickled out in small chunks."""
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not chunk_delay:
            self.wfile.write(data)
            return
        for start in range(0, len(data), 16):
            self.wfile.write(data[start : start + 16])
            self.wfile.flush()
            if self.server.stopping.wait(chunk_delay):
                break

    def drop(self, data: bytes = b"") -> None:
        """Send headers promising ``data`` and half of it, then cut the connection."""
        if data:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
