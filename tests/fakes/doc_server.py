"""A scriptable loopback HTTP document server for the URL-resolution tests.

Bound to ``127.0.0.1`` on a random port (never any other address), in a daemon thread. Each path is
scripted with a :class:`Page`; every request is logged with its ``Host`` header and request headers,
so tests can prove what was (and was not) fetched, and where the connection actually went.
Responses are HTTP/1.0 style: without a ``Content-Length`` the body ends when the connection closes,
which is what the endless and slow bodies need.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


@dataclass
class Page:
    """One scripted response."""

    body: bytes | Callable[[], Iterable[bytes]] = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/plain; charset=utf-8"})
    delay: float = 0.0
    """Seconds to wait before answering at all."""


@dataclass(frozen=True)
class Hit:
    path: str
    host: str
    headers: dict[str, str]


def endless(chunk: int = 65536) -> Callable[[], Iterator[bytes]]:
    """A body that never ends."""

    def generate() -> Iterator[bytes]:
        while True:
            yield b"a" * chunk

    return generate


def trickle(pieces: int, pause: float) -> Callable[[], Iterator[bytes]]:
    """A body sent one byte at a time, ``pause`` seconds apart."""

    def generate() -> Iterator[bytes]:
        for _ in range(pieces):
            time.sleep(pause)
            yield b"x"

    return generate


class DocServer:
    """``with DocServer() as server: server.pages["/doc"] = Page(b"hi")``."""

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self) -> None:
                with owner._lock:
                    owner.hits.append(
                        Hit(self.path, self.headers.get("Host", ""), dict(self.headers.items()))
                    )
                page = owner.pages.get(self.path.split("?")[0], Page(b"not found", status=404))
                if page.delay:
                    time.sleep(page.delay)
                try:
                    self.send_response(page.status)
                    for name, value in page.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    chunks = [page.body] if isinstance(page.body, bytes) else page.body()
                    for chunk in chunks:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on purpose (size or time limit)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        # A short poll interval keeps shutdown (and so each test's teardown) fast.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> DocServer:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def text(self, path: str, body: str, content_type: str = "text/plain; charset=utf-8") -> None:
        """Serve ``body`` as UTF-8 at ``path``."""
        self.pages[path] = Page(body.encode("utf-8"), headers={"Content-Type": content_type})

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        """Answer ``path`` with a redirect to ``location``."""
        self.pages[path] = Page(status=status, headers={"Location": location, "Content-Length": "0"})

    def paths(self) -> list[str]:
        """The paths requested so far, in order."""
        with self._lock:
            return [hit.path for hit in self.hits]
