"""Counters of a run's model calls, shared by the call loop (writes) and the status line (reads);
the cost is read from the run's call ledger, where every call is recorded.

Plain Python and thread-safe: the call path updates it on the loop's thread, pytest's main thread
reads a :class:`Snapshot` to draw the status line. "Samples" are the items whose calls were
started (every ``--omk-repeat`` round of one item counts as one sample); "in flight" are the calls
an executor is answering right now; "retrying" are calls that failed transiently at least once and
have not finished yet; "failed" are samples whose calls failed for good (the item ERRORs).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from pytest_omk.models.accounting import CallLedger


@dataclass(frozen=True)
class Snapshot:
    """The counters at one moment."""

    total: int
    done: int
    in_flight: int
    retrying: int
    failed: int
    cost: float
    elapsed: float

    def eta(self) -> float | None:
        """Seconds left at the pace so far (``None`` until a sample is done)."""
        if self.done == 0 or self.done >= self.total:
            return None
        return self.elapsed / self.done * (self.total - self.done)


class CallProgress:
    """Thread-safe counters; ``clock`` is injectable for tests."""

    def __init__(self, clock: Callable[[], float] | None = None, ledger: CallLedger | None = None) -> None:
        """``ledger``: where the run's calls are recorded (the cost shown is read there)."""
        self._clock: Callable[[], float] = clock or time.monotonic
        self.ledger = ledger or CallLedger()
        self._lock = threading.Lock()
        self._start: float | None = None
        self._counts = {"total": 0, "done": 0, "in_flight": 0, "retrying": 0, "failed": 0}
        self._planned = 0

    def _add(self, name: str, delta: int) -> None:
        with self._lock:
            if self._start is None:
                self._start = self._clock()
            self._counts[name] += delta

    def plan(self, count: int) -> None:
        """``count`` samples will be started later, as the run loop nears them: count them now."""
        with self._lock:
            self._counts["total"] += count
            self._planned += count

    def sample_started(self) -> None:
        """A sample's calls started (one planned sample less to start)."""
        with self._lock:
            planned = self._planned > 0
            self._planned -= planned
        self._add("total", 0 if planned else 1)

    def sample_finished(self, *, failed: bool) -> None:
        """A sample's calls ended; ``failed``: with an infrastructure failure."""
        self._add("done", 1)
        if failed:
            self._add("failed", 1)

    def attempt_started(self) -> None:
        """A call attempt went out."""
        self._add("in_flight", 1)

    def attempt_finished(self) -> None:
        """A call attempt came back (answered or failed)."""
        self._add("in_flight", -1)

    def retrying(self, delta: int) -> None:
        """``delta`` calls more (or fewer) are between retries."""
        self._add("retrying", delta)

    def snapshot(self) -> Snapshot:
        """The counts now, with the time since the first sample started."""
        with self._lock:
            elapsed = 0.0 if self._start is None else self._clock() - self._start
            counts = dict(self._counts)
        return Snapshot(**counts, cost=self.ledger.total().live_cost_usd, elapsed=elapsed)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def render(snapshot: Snapshot, money: str, width: int | None = None) -> str:
    """``omk: 3/10 samples · 2 in flight · 1 retrying · 0 failed · $0.0021 · 12s · ETA 28s``; when
    that is wider than ``width``, the compact ``omk 3/10 · 2 live · 1 retry · 0 failed · $0.0021 ·
    ETA 28s`` (the elapsed time goes first: the ETA says more), then only the progress, cost and ETA."""
    eta = f"ETA {_duration(remaining)}" if (remaining := snapshot.eta()) is not None else "ETA -"
    done = f"{snapshot.done}/{snapshot.total}"
    forms = [
        " · ".join(
            [
                f"omk: {done} samples",
                f"{snapshot.in_flight} in flight",
                f"{snapshot.retrying} retrying",
                f"{snapshot.failed} failed",
                money,
                _duration(snapshot.elapsed),
                eta,
            ]
        ),
        " · ".join(
            [
                f"omk {done}",
                f"{snapshot.in_flight} live",
                f"{snapshot.retrying} retry",
                f"{snapshot.failed} failed",
                money,
                eta,
            ]
        ),
        f"omk {done} · {money} · {eta}",
    ]
    return next((form for form in forms if width is None or len(form) <= width), forms[-1])
