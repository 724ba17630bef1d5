"""Call progress of xdist workers, carried to the controller in small status files.

Under pytest-xdist the workers make the model calls and the controller owns the terminal, so the
status line needs each worker's counters in the controller. Every worker writes its
:class:`~pytest_omk.execute.progress.Snapshot` as JSON to ``<dir>/<worker id>.json`` a few times a second
when it changes; the controller reads the directory and adds the files up.

Why files and not xdist's own channel: a worker can only send the events xdist knows (an unknown
event name stops the controller with ``ValueError``), and the reports it forwards arrive when an
item ends, so they say nothing while the first, slow call is running, which is exactly when the
line is wanted. A file replaced atomically (``os.replace`` of a finished temporary file) is read
whole or not at all, needs no protocol between the versions of xdist, and a worker that dies
leaves its last counts behind instead of blocking anyone.

Plain Python: no pytest, no module state; paths and clocks are passed in.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pytest_omk.execute.progress import CallProgress, Snapshot

WRITE_TICK = 0.1
"""Seconds between a worker's looks at its counters (a file is written only when they changed)."""
COUNTS = ("total", "done", "in_flight", "retrying", "failed")


def write_status(path: Path, snapshot: Snapshot) -> None:
    """Replace ``path`` with ``snapshot``'s counts, atomically (readers never see half a file)."""
    data = {name: getattr(snapshot, name) for name in COUNTS}
    data["cost"] = snapshot.cost
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(data), encoding="utf-8")
    os.replace(temporary, path)


def read_statuses(directory: Path) -> list[dict[str, float]]:
    """The counts of every worker's file in ``directory`` (an unreadable file counts as absent)."""
    found: list[dict[str, float]] = []
    try:
        paths = sorted(directory.glob("*.json"))
    except OSError:
        return found
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            found.append({k: float(v) for k, v in data.items() if isinstance(v, (int, float))})
    return found


class CombinedProgress:
    """The controller's view: the sum of the workers' files, timed on the controller's clock."""

    def __init__(self, directory: Path, clock: Callable[[], float] | None = None) -> None:
        self._directory = directory
        self._clock: Callable[[], float] = clock or time.monotonic
        self._start: float | None = None

    def snapshot(self) -> Snapshot:
        """The workers' counts added up; elapsed time runs from the first call any worker started."""
        statuses = read_statuses(self._directory)
        counts = {name: int(sum(s.get(name, 0) for s in statuses)) for name in COUNTS}
        if counts["total"] and self._start is None:
            self._start = self._clock()
        elapsed = 0.0 if self._start is None else self._clock() - self._start
        return Snapshot(**counts, cost=sum(s.get("cost", 0.0) for s in statuses), elapsed=elapsed)


class StatusWriter:
    """A worker's thread that keeps ``path`` up to date with ``progress`` until :meth:`stop`."""

    def __init__(self, progress: CallProgress, path: Path, tick: float = WRITE_TICK) -> None:
        self._progress = progress
        self._path = path
        self._tick = tick
        self._stopped = threading.Event()
        self._written: tuple[object, ...] | None = None
        self._thread = threading.Thread(target=self._run, name="omk-status-writer", daemon=True)

    def start(self) -> None:
        """Begin writing (in a daemon thread: it never keeps a worker alive)."""
        self._thread.start()

    def stop(self) -> None:
        """Write the final counts and end the thread."""
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join()
        self._write_if_changed()

    def _run(self) -> None:
        while not self._stopped.wait(self._tick):
            self._write_if_changed()

    def _write_if_changed(self) -> None:
        snapshot = self._progress.snapshot()
        counts = (*(getattr(snapshot, name) for name in COUNTS), snapshot.cost)
        if counts == self._written:
            return
        try:
            write_status(self._path, snapshot)
        except OSError:
            return  # the controller removed the directory (end of run): nothing left to tell
        self._written = counts
