"""Model calls already sent: a run that ends normally lets them answer and counts them; Ctrl-C does not wait.

A run starts its samples' calls ahead of pytest's run loop, so a run cut short (``-x``,
``--maxfail``, a budget stop) has calls under way for samples it will never run. A call still
waiting for a concurrency slot is cancelled before it is sent: nothing is spent. A call already
sent cannot be taken back: the server answers it and bills it whether or not the client still
listens. So when such a run ends, :meth:`InFlight.settle` first closes the door (no further call
is sent), then waits, on events and within a short bound, for the calls already sent: each is
answered and noted in its sample's log like any other (its sample is not graded: the summary
counts it apart, docs/reporting.md "Every call is counted").

Ctrl-C waits for nothing: every call is cancelled at once, as always. A call cancelled after it
was sent (Ctrl-C, or one still unanswered when the bound ran out) is noted as a live call with no
answer (its cost unknown) and counted in :attr:`InFlight.cut`, which the summary reports as calls
in flight when the run stopped. No task of its own per call: the wrapper is a plain coroutine.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

SETTLE_SECONDS = 10.0
"""The most a run that ends normally waits for the calls it has sent (Ctrl-C waits for none)."""


class InFlight:
    """The attempts sent and not answered yet (lives on the call loop; touched only from it,
    except :attr:`cut`, a plain counter read once the run has stopped)."""

    def __init__(self) -> None:
        self._open = 0
        self._idle: asyncio.Event | None = None
        self._closed = False
        self.cut = 0
        """Attempts sent and cancelled before their answer came (Ctrl-C, the settle bound)."""

    def finishing(
        self, attempt: Callable[[], Awaitable[T]], unanswered: Callable[[], None] | None
    ) -> Callable[[], Awaitable[T]]:
        """``attempt``, counted as sent while it runs; once the run is closing it is not sent at
        all (cancelled). Cancelled while sent, ``unanswered()`` notes it (a call made, no answer).
        ``unanswered=None``: an app's run, no call itself (the gateway notes each of its calls
        before answering it), waited for all the same, so that its calls are noted."""

        async def sent() -> T:
            if self._closed:  # the run is ending: nothing more is sent
                raise asyncio.CancelledError
            self._open += 1
            try:
                return await attempt()
            except asyncio.CancelledError:
                if unanswered is not None:
                    self.cut += 1
                    unanswered()
                raise
            finally:
                self._open -= 1
                if not self._open and self._idle is not None:
                    self._idle.set()

        return sent

    def close(self) -> None:
        """Send nothing more (any thread: a flag the call loop reads before each send). Ctrl-C's
        cancellations free slots one by one: without it, calls queued behind them were sent."""
        self._closed = True

    async def settle(self, bound: float = SETTLE_SECONDS) -> int:
        """Send nothing more, and wait (at most ``bound`` seconds) until every attempt sent has
        ended; returns how many are still unanswered (the caller cancels them)."""
        self.close()
        if self._open:
            self._idle = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), bound)
        # The callers of the attempts just answered note them when they next run: give them the turn.
        for _ in range(3):
            await asyncio.sleep(0)
        return self._open
