"""A small HTTP/1.1 server on 127.0.0.1, with its own event loop on a daemon thread.

What the model gateway (:mod:`pytest_omk.app.gateway`) listens with. Its connections speak a
small, strict HTTP/1.1 (:mod:`pytest_omk.app.connection`, which says why not h11's): it bounds a
head, refuses CR, LF and controls in header names and values, in what it reads and in what it
writes, and any ambiguous body framing. This module keeps the server, its limits (a cap on open
connections, deadlines for a request's head, its body and an idle kept-alive connection) and the
handler's answer; :mod:`pytest_omk.app.listener` accepts its connections. Its loop is its own, not the
call loop's: an ``async`` app that calls a blocking client would otherwise stop the very loop that
must answer it. No pytest here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from pytest_omk.app.connection import Connections
from pytest_omk.app.listener import Listener
from pytest_omk.app.messages import (
    MAX_BODY_BYTES,
    MAX_HEAD_BYTES,
    Guard,
    Handler,
    HttpRequest,
    HttpResponse,
    Limits,
    Quick,
    without_userinfo,
    written,
)

T = TypeVar("T")


class LoopbackServer:
    """Serves ``handler`` on ``127.0.0.1`` (port chosen by the system) until :meth:`stop`.

    ``guard`` sees every request's head before its body is read (over the socket and in process);
    what it answers is sent instead of the handler's, and the connection closed."""

    def __init__(
        self,
        handler: Handler,
        *,
        quick: Quick | None = None,
        guard: Guard | None = None,
        limits: Limits | None = None,
        name: str = "pytest-omk-gateway",
    ) -> None:
        self._handler = handler
        self._quick = quick
        self.guard = guard
        self.limits = limits or Limits()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._listener: Listener | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.port = 0
        self.accepted = 0
        """Connections accepted so far (requests answered in process open none)."""
        self.saturated: Callable[[str], None] | None = None
        """Told why when a connection is turned away because every allowed one is busy."""
        self.pool = Connections(self)
        """The open connections (and which of them wait for a request head)."""

    def start(self) -> int:
        """Bind and serve; returns the port."""
        self._thread.start()
        self._listener = Listener(self.pool.serve, cap=self.limits.connections, limit=MAX_HEAD_BYTES)
        self._loop.call_soon_threadsafe(self._listener.start)
        self.port = self._listener.port
        return self.port

    @property
    def sockets_at_most(self) -> int:
        """The most connections' sockets this server has held at once (0 before :meth:`start`)."""
        return 0 if self._listener is None else self._listener.peak

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the server's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the server's loop."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def track(self, task: asyncio.Task[None], *, opened: bool) -> None:
        """A connection's task opened or ended (stopping cancels the open ones)."""
        if opened:
            self._connections.add(task)
            self.accepted += 1
        else:
            self._connections.discard(task)

    def turned_away(self, message: str) -> None:
        """A connection was refused because every allowed one is busy: tell :attr:`saturated`."""
        if self.saturated is not None:
            self.saturated(message)

    def stop(self, cleanup: Coroutine[Any, Any, None] | None = None) -> None:
        """Close the listener and every connection, run ``cleanup``, end the thread."""
        if not self._thread.is_alive():
            if cleanup is not None:
                cleanup.close()
            return

        async def shut() -> None:
            if self._listener is not None:
                self._listener.close()
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

    def refusal(self, request: HttpRequest) -> HttpResponse | None:
        """The guard's refusal of ``request`` by its head, or ``None`` (no guard: none)."""
        refused = None if self.guard is None else self.guard(request)
        return None if refused is None else written(refused)

    def respond_here(self, request: HttpRequest) -> HttpResponse | None:
        """The quick answer to ``request``, made on the caller's thread (a client in this process,
        see :mod:`~pytest_omk.app.in_process`); ``None``: :meth:`respond` must answer it."""
        refused = self.refusal(request)
        if refused is not None:
            return refused
        if self._quick is None or len(request.body) > MAX_BODY_BYTES:
            return None
        try:
            answer = self._quick(request)
        except Exception:  # whatever went wrong, the loop's path answers it as it always did
            return None
        return None if answer is None else written(answer)

    async def respond(self, request: HttpRequest, *, guarded: bool = False) -> HttpResponse:
        """The handler's answer to ``request`` (``guarded``: its head has passed the guard already);
        a handler bug is answered with a 500."""
        refused = None if guarded else self.refusal(request)
        if refused is not None:
            return refused
        if len(request.body) > MAX_BODY_BYTES:
            return HttpResponse(413, f"request body over {MAX_BODY_BYTES} bytes".encode())
        try:
            return written(await self._handler(request))
        except Exception as exc:  # a bug must reach the app as an answer, not as a dropped connection
            message = without_userinfo(f"pytest-omk gateway error: {type(exc).__name__}: {exc}")
            return HttpResponse(500, message.encode())
