"""Retries with backoff, and a concurrency limit that adapts to congestion (429s and timeouts).

``call_with_retries`` runs one model call, retrying ``TransientError`` (429, 5xx, timeouts, dropped
connections, malformed bodies) with the server's ``Retry-After`` hint when it gives one and
jittered exponential backoff otherwise. Every attempt holds a slot of an :class:`AdaptiveLimiter`;
the slot is released while backing off, so a waiting call never blocks others.

The limiter shrinks on congestion the way TCP congestion control does (halve on a signal, grow by
one after a run of good answers), so a run at ``--omk-concurrency 16`` against a provider that
allows fewer requests settles near what it allows instead of hammering it with retries. A 429 is
one signal; a call that timed out is the other: a server with fewer slots than calls in flight
(llama.cpp's ``-np``, vLLM's ``max_num_seqs``) queues the rest, and the last in its queue time out.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TypeVar

from pytest_omk.errors import ExecutionError
from pytest_omk.execute.base import TransientError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a transient failure."""

    retries: int = 3
    """Retries after the first attempt; 0 means a single attempt."""
    base_delay: float = 0.5
    """Backoff before retry k (0-based) is ``base_delay * 2**k`` seconds, jittered and capped."""
    max_delay: float = 30.0
    """Upper bound of any wait, including a server's ``Retry-After``."""
    jitter: float = 0.25
    """Relative spread of the backoff (0.25: ±25 %), so that failed calls do not retry in lockstep."""

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("base_delay and max_delay must be >= 0")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter must be within [0, 1], got {self.jitter}")

    def delay(self, retry: int, error: TransientError, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (0-based) after ``error``."""
        if error.retry_after is not None:
            return min(max(error.retry_after, 0.0), self.max_delay)
        backoff = min(self.base_delay * 2.0**retry, self.max_delay)
        backoff *= 1 + rng.uniform(-self.jitter, self.jitter)
        return min(max(backoff, 0.0), self.max_delay)


class AdaptiveLimiter:
    """At most ``current_limit`` holders at once; the limit halves on congestion and creeps back up.

    The limit never goes below ``min_limit`` nor above ``limit``. It grows by one after
    ``recover_after`` consecutive successes. Waiters are served first come, first served.
    """

    def __init__(self, limit: int, min_limit: int = 1, *, recover_after: int = 5) -> None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        if recover_after < 1:
            raise ValueError(f"recover_after must be >= 1, got {recover_after}")
        self.limit = limit
        self.min_limit = min(max(min_limit, 1), limit)
        self.recover_after = recover_after
        self._current = limit
        self._in_flight = 0
        self._successes = 0
        self._epoch = 0
        self._waiters: deque[_Waiter] = deque()
        # Thread-safe: the executors' calls hold slots on the call loop, an app's model calls
        # through the gateway on the gateway's loop.
        self._lock = threading.Lock()

    @property
    def current_limit(self) -> int:
        """The effective limit now."""
        return self._current

    @property
    def in_flight(self) -> int:
        """Slots held now."""
        return self._in_flight

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        """Hold one slot for the block; yields the limit's epoch, for :meth:`on_congestion`."""
        await self._acquire()
        try:
            yield self._epoch
        finally:
            self._release()

    def on_congestion(self, epoch: int | None = None) -> None:
        """Halve the limit (not below ``min_limit``).

        ``epoch`` is what :meth:`slot` yielded: a signal from a call that started before the last cut
        was caused by the old, higher concurrency, so it does not cut again. Without it, every
        signal cuts.
        """
        self._successes = 0
        if epoch is not None and epoch != self._epoch:
            return
        self._current = max(self.min_limit, self._current // 2)
        self._epoch += 1

    def on_success(self) -> None:
        """Count a success; after ``recover_after`` in a row, raise the limit by one."""
        self._successes += 1
        if self._successes >= self.recover_after and self._current < self.limit:
            self._current += 1
            self._successes = 0
            self._dispatch()

    async def _acquire(self) -> None:
        with self._lock:
            if not self._waiters and self._in_flight < self._current:
                self._in_flight += 1
                return
            waiter = _Waiter(asyncio.get_running_loop().create_future())
            self._waiters.append(waiter)
        try:
            await waiter.future
        except asyncio.CancelledError:
            with self._lock:
                granted = waiter.granted
                if not granted and waiter in self._waiters:
                    self._waiters.remove(waiter)
            if granted:
                # The slot was handed over just as we were cancelled: pass it on.
                self._release()
            raise

    def _release(self) -> None:
        with self._lock:
            self._in_flight -= 1
        self._dispatch()

    def _dispatch(self) -> None:
        # Hand slots directly to waiters so that a newcomer cannot overtake them. A waiter may
        # wait on another thread's loop (an app's model gateway shares the executors' limit):
        # its future is completed on its own loop.
        with self._lock:
            granted: list[_Waiter] = []
            while self._waiters and self._in_flight < self._current:
                waiter = self._waiters.popleft()
                if not waiter.future.done():
                    self._in_flight += 1
                    waiter.granted = True
                    granted.append(waiter)
        for waiter in granted:
            _wake(waiter.future)


@dataclass(eq=False)
class _Waiter:
    """A call waiting for a slot; ``granted`` once a slot is handed to it (under the lock)."""

    future: asyncio.Future[None]
    granted: bool = False


def _wake(future: asyncio.Future[None]) -> None:
    """Complete ``future`` on its own loop (at once when that loop is this thread's)."""
    loop = future.get_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        _set(future)
    else:
        loop.call_soon_threadsafe(_set, future)


def _set(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    limiter: AdaptiveLimiter,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rng: random.Random | None = None,
) -> tuple[T, int]:
    """Run ``call`` until it succeeds; return its result and the number of retries used.

    Only ``TransientError`` is retried. After the last attempt fails, raises
    ``ExecutionError("<last error> (after N retries)")``; other exceptions, cancellation included,
    propagate at once.
    """
    rng = rng or random.Random()
    retry = 0
    while True:
        async with limiter.slot() as epoch:
            try:
                result = await call()
            except TransientError as exc:
                if exc.congestion:
                    limiter.on_congestion(epoch)
                error = exc
            else:
                limiter.on_success()
                return result, retry
        if retry >= policy.retries:
            raise ExecutionError(f"{error} (after {retry} retries)") from error
        await sleep(policy.delay(retry, error, rng))
        retry += 1
