"""The gateway's listening socket: it accepts a connection only while the process can afford one.

asyncio's own server accepts up to a hundred connections in each turn of its loop, whatever the
connections it already holds; a connection closed to make room gives its descriptor back only a
few turns later. Against a flood of half-open connections (another local process, a web page in
the user's browser) the process went past its descriptor limit between those turns, and whatever
opened a file next (an import, a recording, the report) failed with ``Errno 24``. This listener
accepts one connection at a time and only while fewer than the cap plus one are held, a socket
counting as held until it is closed, so a flood costs the process at most that many descriptors
however fast it comes. The extra one is the newcomer that makes room (the longest-waiting
connection is closed for it) or is answered 503. No pytest here.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable

Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
"""Serves one connection until it closes (``Connections.serve``)."""


class Listener:
    """Accepts on ``127.0.0.1`` (a port the system picks) and hands each connection to ``serve``."""

    def __init__(self, serve: Serve, *, cap: int, limit: int) -> None:
        self._serve = serve
        self.cap = cap
        """Connections served at once; one more may be held while it makes room or is refused."""
        self._limit = limit
        self.held = 0
        """Sockets accepted and not yet closed."""
        self.peak = 0
        """The most sockets held at once."""
        self._room = asyncio.Event()
        self._room.set()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(128)
        self._socket.setblocking(False)
        self.port = int(self._socket.getsockname()[1])
        self._accepting: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        """Each connection's task, held until it ends (the loop keeps only weak references)."""

    def start(self) -> None:
        """Start accepting (on the running loop)."""
        self._accepting = asyncio.get_running_loop().create_task(self._accept_forever())

    def close(self) -> None:
        """Stop accepting and close the listening socket (open connections are the caller's)."""
        if self._accepting is not None:
            self._accepting.cancel()
        self._socket.close()

    async def _accept_forever(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._room.wait()
            try:
                conn, _ = await loop.sock_accept(self._socket)
            except OSError:
                if self._socket.fileno() == -1:
                    return  # closed: the server stops
                # Out of descriptors all the same (other work of the process): wait for one to close.
                await asyncio.sleep(0.05)
                continue
            self._opened()
            task = loop.create_task(self._connection(conn))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _connection(self, conn: socket.socket) -> None:
        try:
            try:
                reader, writer = await asyncio.open_connection(sock=conn, limit=self._limit)
            except Exception:
                conn.close()
                return
            try:
                await self._serve(reader, writer)
            finally:
                writer.close()
                # The descriptor is given back only once the transport has closed its socket.
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
        finally:
            self._closed()

    def _opened(self) -> None:
        self.held += 1
        self.peak = max(self.peak, self.held)
        if self.held > self.cap:
            self._room.clear()

    def _closed(self) -> None:
        self.held -= 1
        if self.held <= self.cap:
            self._room.set()
