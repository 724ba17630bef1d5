"""``--omk-known-failures=xfail``: what failed in the baseline and fails again is an expected failure.

A suite at a 90 % pass rate cannot gate on its failures: the samples that already failed keep every
run red. With a baseline (``--omk-baseline``) they are known: such a sample that fails again is
reported XFAIL ("failed in the baseline too: ..."), one that passes now XPASS (not strict: the run
stays green), and any other failure fails the run as before (a new sample, one that passed in the
baseline, an ERROR, the regression gate). pytest's own xfail carries it everywhere pytest reports:
the terminal, JUnit (``<skipped type="pytest.xfail">``), pytest-html; the record says it too
(``knownFailure``, outcome ``xfailed``/``xpassed``), so the JSON report, the Markdown summary, the
PR section and ``merge`` agree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.errors import SampleFailed
from pytest_omk.plugin.safety import ShownLines
from pytest_omk.report.view import failure_reasons

KNOWN = "failed in the baseline too"
"""What an expected failure's reason starts with (the item's, and each failed check's)."""
KNOWN_OUTCOMES = ("failed", "xfailed")
"""Baseline outcomes that make a failure known (an ``xfailed`` one: known in the baseline's run too)."""
REASON_CHARS = 200
known_failure_key = pytest.StashKey[str]()
"""On an item whose sample failed in the baseline: the reason its expected failure is shown with."""


def known_failures(baseline: Mapping[str, Any]) -> dict[str, str]:
    """Node id → reason, for each sample that failed in ``baseline`` (a tripwire is xfail already)."""
    reasons = {str(row["nodeid"]): known_reason(row) for row in baseline.get("samples") or []}
    return {nodeid: reason for nodeid, reason in reasons.items() if reason is not None}


def known_reason(row: Mapping[str, Any]) -> str | None:
    """Why a baseline record is a known failure (``None``: it is not one)."""
    if row.get("outcome") not in KNOWN_OUTCOMES or (row.get("metadata") or {}).get("tripwire"):
        return None
    reasons = failure_reasons(row) or [str(row.get("outcome"))]
    first = reasons[0] if len(reasons[0]) <= REASON_CHARS else reasons[0][: REASON_CHARS - 1] + "…"
    more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return f"{KNOWN}: {first}{more}"


class KnownFailures:
    """Marks the known failures at collection (where items are collected: a worker under xdist) and
    counts what became of them for the terminal (on the controller)."""

    def __init__(self, config: pytest.Config, baseline: str) -> None:
        self.config = config
        self.baseline = baseline
        self._known: dict[str, str] | None = None
        self.counts: Counter[str] = Counter()

    def known(self) -> dict[str, str]:
        """The baseline's failures (read once: the controller's collector has it already)."""
        if self._known is None:
            collector = self.config.pluginmanager.get_plugin("omk-records")
            document = getattr(collector, "baseline", None)
            if document is None:
                from pytest_omk.compare.baseline import load_baseline
                from pytest_omk.errors import ConfigError

                try:
                    document = load_baseline(Path(self.config.invocation_params.dir) / self.baseline)
                except ConfigError as exc:
                    raise pytest.UsageError(f"omk: {exc}") from None
            self._known = known_failures(document)
        return self._known

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """An xfail mark on each known failure: only the model's failure is expected (an executor
        error, a replay miss stay ERRORs), and a pass is an XPASS that fails nothing."""
        known = self.known()
        for item in items:
            reason = known.get(item.nodeid)
            if reason is not None:
                item.add_marker(pytest.mark.xfail(strict=False, raises=SampleFailed, reason=reason))
                item.stash[known_failure_key] = reason

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count each known failure's item outcome (its checks' subtest reports are not items)."""
        if report.when != "call" or isinstance(report, pytest.SubtestReport):
            return
        if hasattr(report, "wasxfail") and report.nodeid in self.known():
            self.counts["xfailed" if report.skipped else "xpassed"] += 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """One line: how many known failures failed again and how many pass now."""
        if hasattr(self.config, "workerinput") or not self.counts:
            return
        ShownLines(terminalreporter).write_line(
            f"omk known failures (--omk-known-failures=xfail, baseline {self.baseline}): "
            f"{self.counts['xfailed']} failed again (xfail), {self.counts['xpassed']} pass now (xpass)"
        )
