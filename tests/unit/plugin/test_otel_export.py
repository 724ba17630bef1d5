"""``--omk-otel``'s SDK side: the first failed export stops the rest, and the end of the run waits
for the exporter no longer than its deadline."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from pytest_omk.plugin import otel_export
from pytest_omk.plugin.otel_export import Exporter, FailOpenExporter, _ExporterLog
from pytest_omk.report.otel import SpanSpec


class Scripted(SpanExporter):
    """Answers each export with the next result; counts the calls."""

    def __init__(self, *results: SpanExportResult) -> None:
        self.results = list(results)
        self.calls = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.calls += 1
        return self.results.pop(0)


def test_after_the_first_failed_export_the_rest_are_dropped_without_trying() -> None:
    inner = Scripted(SpanExportResult.SUCCESS, SpanExportResult.FAILURE, SpanExportResult.SUCCESS)
    log = _ExporterLog()
    log.messages.append("Failed to export span batch code: 503, reason: busy")
    fail_open = FailOpenExporter(inner, log)
    assert fail_open.export([]) is SpanExportResult.SUCCESS
    assert fail_open.export([]) is SpanExportResult.FAILURE
    assert fail_open.failure == "HTTP 503"
    assert fail_open.export([]) is SpanExportResult.FAILURE
    assert inner.calls == 2  # the third batch never reached the collector


def test_an_exporter_that_raises_is_a_failure_not_an_error() -> None:
    class Broken(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            raise OSError("socket gone")

    fail_open = FailOpenExporter(Broken(), _ExporterLog())
    assert fail_open.export([]) is SpanExportResult.FAILURE
    assert fail_open.failure == "OSError: socket gone"


def test_the_end_of_the_run_waits_no_longer_than_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(otel_export, "FLUSH_DEADLINE_S", 0.2)
    release = threading.Event()

    class Stuck(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            release.wait(60)  # a collector that holds the request open
            return SpanExportResult.SUCCESS

    exporter = Exporter("controller", None)
    exporter.exporter.inner = Stuck()
    try:
        exporter.start_run(time.time_ns())
        exporter.emit(SpanSpec("omk.sample s", time.time_ns(), time.time_ns(), {}))
        exporter.end_run(time.time_ns(), {})
        assert exporter.finish() == "the export did not finish within 0.2 s"
    finally:
        release.set()
