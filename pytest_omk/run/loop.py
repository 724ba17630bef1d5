"""The thread the run's model calls live on, and every warm-up it does before the first call.

Kept apart from :mod:`pytest_omk.execute.calls` so that starting the loop imports nothing heavy: the
session starts it when the first sample file is collected, and the loop builds the TLS context,
imports the HTTP transport and the call path, and opens the executors' clients while the main
thread is still importing the format's models and reading the file. No pytest here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib
import threading
from collections.abc import Coroutine, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pytest_omk.execute.base import Executor
    from pytest_omk.execute.tls import SharedTls

T = TypeVar("T")

TRANSPORT_MODULES = (
    "httpcore",
    "h11",
    "sniffio",
    "anyio",
    "anyio.abc",
    "anyio.streams.tls",
    "anyio._backends._asyncio",
)
"""What httpx imports lazily: its connection pool when the first client is built, the async
backend when the first request connects (about 15 and 17 ms here). Imported ahead, the first wave
of calls does not wait for them. A name a future version lacks is skipped."""


class CallRunner:
    """An asyncio loop on a daemon thread; coroutines go in, concurrent futures come out."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="pytest-omk-calls", daemon=True)
        self._thread.start()
        self._futures: set[concurrent.futures.Future[Any]] = set()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop."""
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        self._futures.add(future)
        future.add_done_callback(self._futures.discard)
        return future

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it."""
        return self.submit(coro).result()

    def cancel_pending(self) -> None:
        """Cancel every call not finished yet (``-x``, Ctrl-C, end of run)."""
        for future in list(self._futures):
            future.cancel()

    def close(self, cleanup: Coroutine[Any, Any, None] | None = None) -> None:
        """Cancel what is left, run ``cleanup`` (closing clients), stop the loop."""
        self.cancel_pending()
        if cleanup is not None and self._loop.is_running():
            # Closing is best effort: it must never mask the run's outcome.
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(cleanup, self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._loop.is_running():
            self._loop.close()


async def preload_transport(tls: SharedTls) -> None:
    """Build the run's one TLS context, then import httpx's lazily imported transport.

    The first thing the loop does: loading the CA bundle (tens of milliseconds) overlaps the main
    thread's imports and collection instead of delaying the first wave of calls.
    """
    tls.context()
    for name in TRANSPORT_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


async def preload(modules: Iterable[str]) -> None:
    """Import ``modules`` (the call path's, named by the caller) off the main thread, early.

    Runs on the call loop while pytest collects, after :func:`preload_transport`: the imports (tens
    of milliseconds) then cost the first wave of calls nothing. The caller names them because it
    is the layer above them all; this module stays below what it loads.
    """
    for name in modules:
        importlib.import_module(name)


def share_tls(executors: Sequence[Executor], tls: SharedTls) -> Sequence[Executor]:
    """Give the executors the run's one TLS context; returns ``executors``.

    Called before any call is submitted: a call that starts before :func:`warm_clients` has run
    still builds its client with the shared context.
    """
    for executor in executors:
        executor.share_tls(tls)
    return executors


async def warm_clients(executors: Iterable[Executor]) -> None:
    """Open each executor's HTTP client now (those that have one)."""
    for executor in executors:
        # Best effort: a client that cannot be built now fails its first call instead, with the
        # call's own error handling.
        with contextlib.suppress(Exception):
            await executor.warm()
