"""``--omk-otel``: the run as one OpenTelemetry trace, exported over OTLP/HTTP (docs/telemetry.md).

One plugin object per process. The controller starts the run's span and hands its ids to every
xdist worker (``workerinput``), so that each process exports its own samples into the one trace. A
sample's spans are built when its teardown report carries its finished record (the process that
ran it: the worker under xdist), by :mod:`pytest_omk.report.otel`. A failed export is reported as
one warning line by the controller, a worker's through its ``workeroutput``; it never fails a test.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import pytest

from pytest_omk.plugin.run_info import outcome_of
from pytest_omk.plugin.safety import ShownLines

if TYPE_CHECKING:
    from pytest_omk.config.settings import Settings
    from pytest_omk.plugin.otel_export import Exporter, Parent
    from pytest_omk.recordings.scrub import Scrubber
    from pytest_omk.report.otel_events import TelemetryOptions

PARENT_KEY = "omk_otel_parent"
"""``workerinput`` key: the run span's trace and span ids (hex), from the controller."""
FAILURE_KEY = "omk_otel_failure"
"""``workeroutput`` key: why a worker's export failed."""
EXTRA = "pip install 'pytest-omk[otel]'"


def register(config: pytest.Config, settings: Settings, scrubber: Callable[[], Scrubber]) -> None:
    """Register the plugin object when ``--omk-otel`` is on; without the SDK, a usage error."""
    if settings.otel_content and not settings.otel:
        raise pytest.UsageError(
            "omk: --omk-otel-content needs --omk-otel (the trace it would add content to)"
        )
    if not settings.otel:
        return
    try:
        from pytest_omk.plugin.otel_export import Exporter
    except ImportError as exc:
        raise pytest.UsageError(
            f"omk: --omk-otel needs the OpenTelemetry SDK and its OTLP/HTTP exporter "
            f"(cannot import {exc.name or exc}): {EXTRA}"
        ) from None
    from pytest_omk.recordings.scrub import Scrubber, environment_snapshot
    from pytest_omk.report.otel_events import TelemetryOptions

    headers_scrubber = Scrubber(header_secrets(environment_snapshot()), key_shaped=True)

    def scrub(text: str) -> str:
        # The run's scrubber is asked each time: it is final only once the calls exist.
        return headers_scrubber.text(scrubber().text(text))

    options = TelemetryOptions(content=settings.otel_content, judge_model=settings.judge_model, scrub=scrub)
    workerinput = getattr(config, "workerinput", None)
    try:
        if workerinput is None:
            exporter = Exporter("controller", None)
            exporter.start_run(time.time_ns())
        else:
            ids = workerinput.get(PARENT_KEY)
            parent: Parent | None = (int(ids[0], 16), int(ids[1], 16)) if ids else None
            exporter = Exporter(str(workerinput.get("workerid", "worker")), parent)
    except Exception as exc:  # the SDK refused its configuration (the OTEL_* variables)
        raise pytest.UsageError(
            f"omk: --omk-otel: the OpenTelemetry exporter cannot be set up from the OTEL_* variables: "
            f"{scrub(str(exc))}"
        ) from None
    config.pluginmanager.register(OtelPlugin(config, exporter, options), "omk-otel")


def header_secrets(environ: dict[str, str]) -> list[str]:
    """The values of the exporter's headers (a backend's API key), whatever their names: each
    whole, URL-decoded (as the variables are written), and each word of it (``Bearer <token>``)."""
    found: list[str] = []
    for name in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"):
        for part in environ.get(name, "").split(","):
            value = part.partition("=")[2].strip()
            for text in {value, unquote(value)} - {""}:
                found += [text, *text.split()]
    return found


class OtelPlugin:
    """Builds each sample's spans from its record and exports them; reports a failed export."""

    def __init__(self, config: pytest.Config, exporter: Exporter, options: TelemetryOptions) -> None:
        self.config = config
        self.exporter = exporter
        self.options = options
        self._starts: dict[str, float] = {}
        self._outcomes: dict[str, str] = {}
        self.counts: Counter[str] = Counter()
        self.failures: list[str] = []
        """Why exports failed (this process's, and on the controller the workers')."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Hand the run span's ids to a worker being started."""
        if self.exporter.parent is not None:
            trace_id, span_id = self.exporter.parent
            node.workerinput[PARENT_KEY] = [f"{trace_id:032x}", f"{span_id:016x}"]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A sample's spans once its teardown report carries its record (before the collector
        takes the record off the report); every sample's outcome counted for the run span."""
        if isinstance(report, pytest.SubtestReport) or "omk" not in report.keywords:
            return
        nodeid = report.nodeid
        if report.when == "setup":
            self._starts[nodeid] = report.start
            self._outcomes.pop(nodeid, None)  # a rerun starts afresh
        outcome = outcome_of(report)
        if outcome is not None and self._outcomes.get(nodeid) != "error":
            self._outcomes[nodeid] = outcome
        if report.when != "teardown":
            return
        outcome = self._outcomes.pop(nodeid, "unknown")
        start = self._starts.pop(nodeid, report.start)
        self.counts[outcome] += 1
        record = getattr(report, "omk_record", None)
        if record is None or getattr(report, "node", None) is not None:
            return  # a worker's report on the controller: the worker exported the sample
        from pytest_omk.report.otel import sample_span

        try:
            spec = sample_span(record, outcome, int(start * 1e9), int(report.stop * 1e9), self.options)
            self.exporter.emit(spec)
        except Exception as exc:  # fail open: telemetry never fails a test, nor the run
            self.exporter.note_failure(f"{nodeid}'s spans were not built ({type(exc).__name__}: {exc})")

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Keep a worker's export failure (reported once, by the controller)."""
        output = getattr(node, "workeroutput", None)
        failure = output.get(FAILURE_KEY) if isinstance(output, dict) else None
        if isinstance(failure, str):
            self.failures.append(failure)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """End the run span (controller), flush within the deadline, note a failure."""
        if self.exporter.root is not None:
            sent = dict(self.counts)
            self.exporter.end_run(
                time.time_ns(),
                {
                    "test.suite.name": "pytest-omk",
                    "test.suite.run.status": "success" if session.exitstatus == 0 else "failure",
                    "omk.exit_status": int(session.exitstatus),
                    **{f"omk.samples.{outcome}": count for outcome, count in sent.items()},
                },
            )
        failure = self.exporter.finish()
        if failure is None:
            return
        failure = self.options.scrub(failure)
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[FAILURE_KEY] = failure
        else:
            self.failures.append(failure)

    def pytest_unconfigure(self) -> None:
        """A run stopped before its end (a usage error found later) leaves no logger changed."""
        self.exporter.restore_logging()

    @pytest.hookimpl(trylast=True)  # after the omk scores section
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """One warning line for every failed export of the run (controller only)."""
        if not self.failures or hasattr(self.config, "workerinput"):
            return
        from pytest_omk._util.visible import visible
        from pytest_omk.plugin.otel_export import endpoint
        from pytest_omk.recordings.scrub import environment_snapshot

        where = self.options.scrub(endpoint(environment_snapshot()))
        processes = "" if len(self.failures) == 1 else f" ({len(self.failures)} processes)"
        # What the exporter logged may quote the collector's answer: made visible, as every sink's text.
        ShownLines(terminalreporter).write_line(
            visible(
                f"omk: warning: OpenTelemetry export to {where} failed: {self.failures[0]}{processes}; "
                "the run's results are unaffected"
            ),
            yellow=True,
        )
