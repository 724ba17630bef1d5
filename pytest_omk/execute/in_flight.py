"""Model calls already sent: they run to their answer though their sample is cancelled, and count.

A run cut short (``-x``, ``--maxfail``, Ctrl-C, the end of the run loop) cancels the calls of the
samples it started ahead of pytest's run loop. A call still waiting for a concurrency slot is
cancelled before it is sent: nothing is spent. A call already sent cannot be taken back: the
server answers it and bills it whether or not the client still listens. Cancelling it only hid
it, so its sample's log never noted it (paid and not counted). Here such a call is left to finish
on the call loop and noted once it is answered; the run waits for those (:meth:`InFlight.drain`)
before its summary, which counts them as calls of samples not graded (docs/reporting.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

SETTLE_STEPS = 5
"""Loop turns given to cancelled samples to take their cancellation (each takes it in one turn)."""


class InFlight:
    """The attempts sent and not answered yet (lives on the call loop; touched only from it)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[object]] = set()

    def finishing(
        self, attempt: Callable[[], Awaitable[T]], answered: Callable[[T], None]
    ) -> Callable[[], Awaitable[T]]:
        """``attempt``, run to its end once started: if its caller is cancelled meanwhile, the
        answer, when it comes, is given to ``answered`` (the caller would have noted it)."""

        async def sent() -> T:
            task: asyncio.Task[T] = asyncio.ensure_future(attempt())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                task.add_done_callback(lambda done: _give(done, answered))
                raise

        return sent

    async def drain(self) -> None:
        """Wait until every attempt sent has ended (and was noted)."""
        for _ in range(SETTLE_STEPS):
            await asyncio.sleep(0)
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
            for _ in range(SETTLE_STEPS):  # the noting callbacks run after the gather's
                await asyncio.sleep(0)


def _give(done: asyncio.Task[T], answered: Callable[[T], None]) -> None:
    """Hand an orphaned attempt's answer on (a failed attempt was no answer: nothing to note)."""
    if not done.cancelled() and done.exception() is None:
        answered(done.result())
