"""A planted start time for in-process runs: the report's ``startedAt`` of each run is chosen."""

from __future__ import annotations

import time

import pytest

from pytest_omk.plugin import run_info


class _Clock:
    """``time`` as the run-info plugin sees it: a planted wall clock, the real monotonic one."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    @staticmethod
    def perf_counter() -> float:
        return time.perf_counter()


def start_runs_at(monkeypatch: pytest.MonkeyPatch, epoch_seconds: float) -> None:
    """The next in-process run starts at ``epoch_seconds`` (its ``startedAt``; durations stay real)."""
    monkeypatch.setattr(run_info, "time", _Clock(epoch_seconds))
