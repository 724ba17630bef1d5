"""What the JSON report says about the run itself, as pytest-json-report users expect it.

``exitStatus``, ``startedAt``, ``durationS``, ``environment`` (Python, pytest, the plugin, the
platform, the versions of the runtime dependencies), ``collectionErrors`` and ``otherTests`` (the
outcome counts of the run's ordinary, non-eval tests). A plugin object watches the run's reports
(on the controller under xdist, which receives every worker's collection and test reports).
"""

from __future__ import annotations

import platform
import time
from collections import Counter
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

import pytest

from pytest_omk import __version__
from pytest_omk.plugin.collection import DIGEST_KEY

DEPENDENCIES = ("pydantic", "pyyaml", "jsonschema", "httpx", "mcp", "sacrebleu", "pytest-xdist")
_MESSAGE_LIMIT = 4000


def environment() -> dict[str, Any]:
    """Versions of what ran the suite (a dependency that is not installed is ``null``)."""
    versions: dict[str, str | None] = {}
    for name in DEPENDENCIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "plugin": __version__,
        "platform": platform.platform(),
        "dependencies": versions,
    }


class RunInfo:
    """Collects the run-level fields; ``section(session)`` renders them at the end."""

    def __init__(self) -> None:
        self.started = time.time()
        self._clock = time.perf_counter()
        self.collection_errors: list[dict[str, str]] = []
        self.other: Counter[str] = Counter()
        self.collection: dict[str, Any] | None = None
        """A worker's collection digest (under xdist the controller collects nothing itself)."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Keep the collection digest a worker computed."""
        output = getattr(node, "workeroutput", None)
        found = output.get(DIGEST_KEY) if isinstance(output, dict) else None
        if self.collection is None and isinstance(found, dict):
            self.collection = found

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """Keep a failed collection's message for the report."""
        if report.failed:
            message = str(report.longrepr)[:_MESSAGE_LIMIT]
            self.collection_errors.append({"nodeid": report.nodeid, "message": message})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count the run's plain tests by outcome."""
        # Every check's report comes here too: settled before anything else is done.
        if isinstance(report, pytest.SubtestReport) or "omk" in report.keywords:
            return
        outcome = outcome_of(report)
        if outcome is not None:
            self.other[outcome] += 1

    def section(self, session: pytest.Session) -> dict[str, Any]:
        """The run-level fields of the report document."""
        return {
            "exitStatus": int(session.exitstatus),
            "startedAt": datetime.fromtimestamp(self.started, UTC).isoformat(timespec="seconds"),
            "durationS": round(time.perf_counter() - self._clock, 3),
            "environment": environment(),
            "collectionErrors": list(self.collection_errors),
            "otherTests": {"total": sum(self.other.values()), **dict(sorted(self.other.items()))},
            **({"collection": collection} if (collection := self._collection(session)) else {}),
        }

    def _collection(self, session: pytest.Session) -> dict[str, Any] | None:
        hooks = session.config.pluginmanager.get_plugin("omk-collection")
        own = getattr(hooks, "digest", None)
        return self.collection or (own if isinstance(own, dict) else None)


def outcome_of(report: pytest.TestReport) -> str | None:
    """The test's outcome this report settles (``passed``, ``error``, ``xfailed`` ...), else ``None``."""
    wasxfail = hasattr(report, "wasxfail")
    if report.when == "setup":
        if report.failed:
            return "error"
        if report.skipped:
            return "xfailed" if wasxfail else "skipped"
        return None
    if report.when == "call":
        if wasxfail:
            return "xpassed" if report.passed else "xfailed"
        return str(report.outcome)
    if report.when == "teardown" and report.failed:
        return "error"
    return None
