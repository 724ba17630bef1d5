"""The live status line under pytest-xdist: workers count, the controller draws.

The workers make the model calls but print nothing; each writes its counters to a status file
(``status_files``: why files and not xdist's channel is explained there). The controller creates
the directory, hands it to every worker in ``workerinput``, and shows the sum with the same
:class:`~pytest_omk.plugin.status_line.StatusLine` as a single process: rewritten in place on a terminal,
a plain line every ``omk_status_interval`` seconds otherwise, nothing under ``-q``.

The controller's main thread spends the run blocked in xdist's event queue, and drawing from
another thread would interleave with pytest's output. So a ticker thread puts an ``omk_status``
event on that queue and xdist's loop calls ``worker_omk_status`` (set on its ``DSession``) on the
main thread, between the reports it prints. This touches one xdist internal (``DSession.queue``
and its ``worker_<event>`` dispatch), duck-typed: when it is missing, there is simply no line.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.execute.progress import CallProgress
from pytest_omk.plugin.status_line import StatusLine
from pytest_omk.plugin.xdist.status_files import CombinedProgress, StatusWriter

DIR_KEY = "omk_status_dir"
"""The ``workerinput`` key naming the directory of the status files."""
EVENT = "omk_status"


def register(config: pytest.Config, progress: CallProgress, interval: float) -> None:
    """Register the status plugin of this process: a worker's writer or the controller's line."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        directory = workerinput.get(DIR_KEY)
        if directory:
            path = Path(directory) / f"{workerinput.get('workerid', 'gw')}.json"
            config.pluginmanager.register(WorkerStatus(StatusWriter(progress, path)), "omk-xdist-status")
        return
    if interval > 0 and config.get_verbosity() >= 0 and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(ControllerStatus(config, interval), "omk-xdist-status")


class WorkerStatus:
    """In a worker: keeps its status file current from configure to unconfigure."""

    def __init__(self, writer: StatusWriter) -> None:
        self._writer = writer
        writer.start()

    def pytest_unconfigure(self) -> None:
        """Stop writing this worker's counts."""
        self._writer.stop()


class ControllerStatus:
    """In the controller: the directory for the workers' files, and the aggregated line."""

    def __init__(self, config: pytest.Config, interval: float) -> None:
        self._config = config
        self._interval = interval
        self._directory: Path | None = None
        self._line: StatusLine | None = None
        self._progress: CombinedProgress | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        # Called once per worker, before it starts: only a run that has workers gets a directory.
        if self._directory is None:
            self._directory = Path(tempfile.mkdtemp(prefix="omk-status-"))
            self._progress = CombinedProgress(self._directory)
        node.workerinput[DIR_KEY] = str(self._directory)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        dsession = self._config.pluginmanager.get_plugin("dsession")
        queue = getattr(dsession, "queue", None)
        reporter = self._config.pluginmanager.get_plugin("terminalreporter")
        if self._progress is None or reporter is None or not callable(getattr(queue, "put", None)):
            return (yield)
        line = StatusLine(
            reporter,
            self._progress,
            interval=self._interval,
            tty=bool(reporter.isatty),
            capture=self._config.pluginmanager.get_plugin("capturemanager"),
        )
        self._line = line
        dsession.worker_omk_status = self._on_tick  # type: ignore[union-attr]
        stopped = threading.Event()

        def tick() -> None:
            while not stopped.wait(line.tick):
                queue.put((EVENT, {}))  # type: ignore[union-attr]

        ticker = threading.Thread(target=tick, name="omk-status-ticker", daemon=True)
        ticker.start()
        try:
            return (yield)
        finally:
            stopped.set()
            ticker.join()
            self._erase()
            self._line = None

    def _on_tick(self) -> None:
        """On xdist's main thread: draw the sum while any worker's calls are unfinished."""
        if self._line is None or self._progress is None:
            return
        snapshot = self._progress.snapshot()
        if snapshot.total == 0 or (snapshot.done >= snapshot.total and snapshot.in_flight == 0):
            self._line.erase()
            return
        self._line.draw(snapshot)

    def _erase(self, **_: object) -> None:
        if self._line is not None:
            self._line.erase()

    # On a terminal the line sits at the end of pytest's current line: it goes before anything
    # else is written there (first, before the terminal reporter's own hook).
    pytest_runtest_logstart = pytest.hookimpl(tryfirst=True)(_erase)
    pytest_runtest_logreport = pytest.hookimpl(tryfirst=True)(_erase)
    pytest_runtest_logfinish = pytest.hookimpl(tryfirst=True)(_erase)
    pytest_warning_recorded = pytest.hookimpl(tryfirst=True)(_erase)
    pytest_internalerror = pytest.hookimpl(tryfirst=True)(_erase)
    pytest_testnodedown = pytest.hookimpl(tryfirst=True, optionalhook=True)(_erase)

    def pytest_unconfigure(self) -> None:
        """Remove the workers' counts files."""
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
