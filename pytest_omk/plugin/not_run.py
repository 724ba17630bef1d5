"""After Ctrl-C: how many of the collected samples never ran, said under the partial summary.

An interrupted run prints the scores of the samples that ran; without a count, a table of 3 rows
reads like a run of 3 samples. This plugin object counts the collected samples and those that
got a result (a call report, or a setup that failed or skipped), and when pytest reports the run
interrupted it writes one line: ``omk: interrupted: 3 of 6 samples not run``. Under xdist the
controller collects nothing itself, and the line is left out.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.plugin.nodes import SampleItem
from pytest_omk.plugin.safety import ShownLines


class NotRunCount:
    """Counts collected and finished samples (see the module docstring)."""

    def __init__(self) -> None:
        self.collected: set[str] = set()
        self.finished: set[str] = set()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The samples to run (an xdist controller collects none, so it prints no count)."""
        self.collected.update(item.nodeid for item in session.items if isinstance(item, SampleItem))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A sample with a result has run."""
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.finished.add(report.nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        """Under the partial summary of an interrupted run: the samples it did not run."""
        if exitstatus != pytest.ExitCode.INTERRUPTED or not self.collected:
            return
        missing = len(self.collected - self.finished)
        if missing:
            ShownLines(terminalreporter).write_line(
                f"omk: interrupted: {missing} of {len(self.collected)} samples not run", yellow=True
            )
