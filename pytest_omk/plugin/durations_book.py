"""``--omk-store-durations[=PATH]``: each sample's recorded call latency, written as pytest-split does.

A sample's weight is the latency of every model call made for it (the model under test's, the
judge's, an app's answers), summed: as recorded for a replayed call, as measured for a live one.
A replay run therefore writes what the samples cost live, in seconds, without calling a model.
A sample that made no timed call gets the mean of the others, so the file weighs every sample.
Under xdist each worker hands its samples' seconds to the controller, which writes the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_omk.config.durations import read_durations, write_durations
from pytest_omk.errors import ConfigError
from pytest_omk.models.accounting import CallLog
from pytest_omk.plugin.safety import ShownLines

WORKER_KEY = "omk_durations"
"""Where a worker leaves its samples' seconds for the controller (its ``workeroutput``)."""


class DurationsBook:
    """The plugin object (``omk-durations``): seconds by node id, written at the end of the run."""

    def __init__(self, config: pytest.Config, path: Path) -> None:
        self.config = config
        self.path = path
        self.seconds: dict[str, float | None] = {}
        """Each sample's summed latency (``None``: no timed call, it takes the mean)."""

    def listen(self, launcher: Any) -> None:
        """Be told each sample's call log as the launcher drops it (after its setup, or a rerun's)."""
        launcher.on_forget = self.note

    def note(self, nodeid: str, log: CallLog) -> None:
        """Keep the summed latency of a sample's calls (a rerun's take replaces the earlier one)."""
        self.seconds[nodeid] = latency_seconds(log)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Take a worker's samples' seconds."""
        output = getattr(node, "workeroutput", None)
        found = output.get(WORKER_KEY) if isinstance(output, dict) else None
        if isinstance(found, dict):
            self.seconds.update(found)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """A worker hands its seconds over; the controller (or a run without xdist) writes the file."""
        output = getattr(self.config, "workeroutput", None)
        if isinstance(output, dict):
            output[WORKER_KEY] = dict(self.seconds)
            return
        if not self.seconds:
            return
        try:
            durations = read_durations(self.path) or {}
        except ConfigError:
            durations = {}  # an unusable file is replaced, not merged with
        durations.update(filled(self.seconds))
        write_durations(self.path, durations)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Say where the durations went."""
        if self.seconds and not hasattr(self.config, "workerinput"):
            ShownLines(terminalreporter).write_line(
                f"omk: recorded latency of {len(self.seconds)} samples written to {self.path} "
                "(--omk-shard-by durations reads it)"
            )


def latency_seconds(log: CallLog) -> float | None:
    """The summed latency of the log's calls in seconds (``None``: no call was timed)."""
    timed = [record.latency_ms for record in log.records if record.latency_ms is not None]
    return sum(timed) / 1000 if timed else None


def filled(seconds: dict[str, float | None]) -> dict[str, float]:
    """Every sample's seconds, the mean of the timed ones for the others."""
    timed = [value for value in seconds.values() if value is not None]
    mean = sum(timed) / len(timed) if timed else 0.0
    return {nodeid: mean if value is None else value for nodeid, value in seconds.items()}
