"""The live status line shown while pytest waits for model calls.

pytest runs items one by one; the first item's setup may wait for a slow call while others finish
in the background, and until now nothing said so. While the main thread waits for an item's calls,
this draws ``omk: 3/10 samples · 2 in flight · 1 retrying · 0 failed · $0.0021 · 12s · ETA 28s``:

- on a terminal, appended to pytest's current line and rewritten in place (backspaces, so pytest's
  own progress characters stay), and erased before the item reports;
- without one (CI logs), as a plain line every ``omk_status_interval`` seconds (default 5);
- never under ``-q``, and never in an xdist worker (whose output is not the terminal): there the
  controller draws the workers' counts added up (``xdist_status``, ``status_files``).

Drawing happens on the main thread, between waits, so it never interleaves with pytest's output.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
from typing import Any, Protocol, TypeVar

from pytest_omk.execute.progress import Snapshot, render
from pytest_omk.plugin.compat import current_line, restore_current_line, terminal_width, terminal_writer
from pytest_omk.report.view import money

T = TypeVar("T")
TTY_TICK = 0.5
"""Seconds between redraws on a terminal."""


class SnapshotSource(Protocol):
    """What the line shows: this process's :class:`~pytest_omk.execute.progress.CallProgress`, or the
    xdist workers' counts added up (:class:`~pytest_omk.plugin.xdist.status_files.CombinedProgress`)."""

    def snapshot(self) -> Snapshot:
        """The counts now."""
        ...


class StatusLine:
    """Draws the status of ``progress`` on ``terminalreporter`` while waiting for a future."""

    def __init__(
        self,
        terminalreporter: Any,
        progress: SnapshotSource,
        *,
        interval: float,
        tty: bool,
        capture: Any = None,
    ) -> None:
        self._reporter = terminalreporter
        self._capture = capture
        """pytest's capture manager: output capturing is suspended while the status is written."""
        self._progress = progress
        self._tty = tty
        self._tick = min(TTY_TICK, interval) if tty else interval
        self._shown = 0
        """Characters of the status currently on the terminal's line (tty only)."""
        self._line = ""
        """pytest's current line before the status was appended to it."""

    def wait(self, future: concurrent.futures.Future[T]) -> T:
        """``future.result()``, drawing the status every tick until it is done."""
        try:
            while not concurrent.futures.wait([future], timeout=self._tick).done:
                self.draw()
        finally:
            self.erase()
        return future.result()

    def _text(self, snapshot: Snapshot | None, width: int | None) -> str:
        snapshot = self._progress.snapshot() if snapshot is None else snapshot
        return render(snapshot, money(snapshot.cost), width)

    @property
    def tick(self) -> float:
        """Seconds between two drawings."""
        return self._tick

    def draw(self, snapshot: Snapshot | None = None) -> None:
        """Draw ``snapshot`` (default: the current counts) once, in the room the terminal has."""
        with self._uncaptured():
            self._draw_now(snapshot)

    def _uncaptured(self) -> contextlib.AbstractContextManager[Any]:
        # Setup runs with stdout captured; the status goes to the terminal, as live logs do.
        if self._capture is None:
            return contextlib.nullcontext()
        return self._capture.global_and_fixture_disabled()  # type: ignore[no-any-return]

    def _draw_now(self, snapshot: Snapshot | None) -> None:
        if not self._tty:
            # A line of the log, in the form that fits the width (docs/reporting.md, line width).
            self._reporter.write_line(self._text(snapshot, terminal_width(self._reporter)))
            return
        writer = terminal_writer(self._reporter)
        if not self._shown:
            self._line = current_line(writer)
        # One write per redraw (erase the old status, then the new one): no flicker.
        back = "\b" * self._shown
        erase = back + " " * self._shown + back
        room = max(0, writer.fullwidth - len(self._line) - 2)
        shown = (" " + self._text(snapshot, room - 1))[:room]
        writer.write(erase + shown, flush=True)
        self._shown = len(shown)

    def erase(self) -> None:
        """Remove the status from the terminal's line (a no-op when none is shown)."""
        if self._shown:
            back = "\b" * self._shown
            writer = terminal_writer(self._reporter)
            with self._uncaptured():
                writer.write(back + " " * self._shown + back, flush=True)
            # pytest pads its progress ("[ 50%]") by the width of the line it wrote: give it back
            # the line as it was, without our backspaces.
            restore_current_line(writer, self._line)
            self._shown = 0
