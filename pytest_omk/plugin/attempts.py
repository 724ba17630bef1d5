"""Each setup of a sample item is an attempt: takes for reruns, and waiting with a status line.

A second setup of the same item is a rerun (pytest-rerunfailures, or any protocol rerun): it asks
the model again as take 1, 2 ... The take is part of the recording key, so each attempt is its own
recording, and replaying a rerun replays that attempt's answer (docs/recording.md, "Reruns and
takes"). While the controller waits for an item's calls, the status line shows the run's progress.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from pytest_omk.plugin.nodes import SampleItem
from pytest_omk.plugin.status_line import StatusLine
from pytest_omk.plugin.xdist.prefetch import WorkerFeed

if TYPE_CHECKING:
    from pytest_omk.execute.progress import CallProgress
    from pytest_omk.models.run import SampleRun

RunsFuture = concurrent.futures.Future[list["SampleRun"]]


class Attempts:
    """``omk-reruns``: counts the setups of each item; a rerun gets the next take and a fresh call."""

    def __init__(self, forget: Callable[[str], None] = lambda nodeid: None) -> None:
        self._seen: dict[str, int] = {}
        self._forget = forget

    def seen(self, nodeid: str) -> bool:
        """Whether the item has had a setup (its first take is started or over)."""
        return nodeid in self._seen

    def next_take(self, item: SampleItem, forget: Callable[[str], None]) -> None:
        """Give a rerun of ``item`` the next take (its earlier future is dropped with ``forget``)."""
        take = self._seen.get(item.nodeid, -1) + 1
        self._seen[item.nodeid] = take
        if take > 0:
            item.plan = replace(item.plan, take=take)
            forget(item.nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Each setup of a sample (a rerun's too) is its next take."""
        if isinstance(item, SampleItem):
            self.next_take(item, self._forget)


def wait_for_runs(
    config: pytest.Config,
    future: RunsFuture,
    *,
    progress: CallProgress,
    interval: float,
    feed: WorkerFeed | None,
    start_indices: Callable[[list[int]], None],
) -> list[SampleRun]:
    """The item's runs; the controller shows the status line meanwhile (not under ``-q``)."""
    if feed is not None:
        return feed.wait(future, start_indices)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if future.done() or reporter is None or interval <= 0 or config.get_verbosity() < 0:
        return future.result()
    capture = config.pluginmanager.get_plugin("capturemanager")
    status = StatusLine(reporter, progress, interval=interval, tty=bool(reporter.isatty), capture=capture)
    return status.wait(future)
