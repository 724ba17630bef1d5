"""How far ahead of pytest's run loop an in-process run starts its samples' model calls (no pytest).

Calls are started before their items run, so the run loop rarely waits. Starting every sample at
once made each result wait in memory until its item ran: replaying 10,000 samples (the call thread
outruns the run loop) held all 10,000 results at once, half of the run's peak memory. The window
starts samples in run order and keeps at most ``size`` of them started and not yet taken by their
item's setup. ``size`` is several times the concurrency, so the executors stay busy while the run
loop waits on a slow sample at the head of the queue.

It is topped up in batches, when only two samples per call slot are left waiting (enough to keep
every slot busy until the batch's first calls are sent), not one sample per item: each top-up
wakes the call thread, which then competes with the run loop for the GIL. Measured on a 10,000-
sample replay, topping up per item cost 10 s more than starting everything at once (24.5 s ->
34-38 s); batches cost about 11 % (25.4 -> 28.2 s in interleaved pairs) and keep the memory bound
(381 -> 249 MB peak, docs/performance.md).

Under xdist a worker starts what the controller sends it (``pytest_omk.plugin.xdist.prefetch``), which
the scheduler already keeps to a few times the concurrency.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

WINDOW_PER_SLOT = 8
"""Samples started ahead of the run loop per call the executors may have in flight."""
WINDOW_MIN = 256
"""The window's smallest size: enough that a small suite starts every sample before its first item."""
REFILL_PER_SLOT = 2
"""The window is topped up once this many samples per slot are left waiting (see :func:`refill_mark`)."""


def window_size(concurrency: int) -> int:
    """Samples a run keeps started ahead of its run loop, for ``concurrency`` calls in flight."""
    return max(WINDOW_MIN, WINDOW_PER_SLOT * max(1, concurrency))


def refill_mark(concurrency: int) -> int:
    """Started samples left waiting at which the window is topped up again: two calls per slot."""
    return REFILL_PER_SLOT * max(1, concurrency)


class _Named(Protocol):
    @property
    def nodeid(self) -> str: ...


ItemT = TypeVar("ItemT", bound=_Named)


class PrefetchWindow(Generic[ItemT]):
    """Starts ``items``' calls in order, up to ``size`` of them waiting for their items, topped up
    (in one batch) when no more than ``refill_at`` are left waiting.

    ``start(item)`` starts an item's calls and says whether it did (a skipped item starts none);
    ``waiting()`` counts the started items whose setup has not taken their result yet;
    ``seen(nodeid)`` tells an item whose setup came first (it started its own calls on demand).
    """

    def __init__(
        self,
        items: Sequence[ItemT],
        size: int,
        refill_at: int,
        *,
        start: Callable[[ItemT], bool],
        waiting: Callable[[], int],
        seen: Callable[[str], bool],
    ) -> None:
        self._items = items
        self._size = size
        self._refill_at = min(refill_at, size - 1)
        self._start = start
        self._waiting = waiting
        self._seen = seen
        self._next = 0

    def fill(self) -> None:
        """Top the window up to ``size`` waiting items, if no more than ``refill_at`` are left."""
        if self._waiting() > self._refill_at:
            return
        while self._next < len(self._items) and self._waiting() < self._size:
            item = self._items[self._next]
            self._next += 1
            if not self._seen(item.nodeid):
                self._start(item)


def worker_share(concurrency: int, workers: int) -> int:
    """One xdist worker's part of the run's concurrency (the total stays what the user allowed)."""
    return max(1, math.ceil(concurrency / max(1, workers)))
