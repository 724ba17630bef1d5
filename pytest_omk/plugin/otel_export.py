"""The OpenTelemetry SDK side of ``--omk-otel``: a tracer provider, its OTLP/HTTP exporter and the
one failure a run reports (docs/telemetry.md).

Imported only when the option is on (the SDK and the exporter are the ``otel`` extra, and start-up
time matters). Everything here fails open: an export that fails is noted once and every later
batch is dropped at once, so an unreachable collector costs one export's timeout and one warning
line, never a failed test; the end-of-run flush is waited for at most :data:`FLUSH_DEADLINE_S`.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from pytest_omk import __version__
from pytest_omk.recordings.scrub import strip_userinfo
from pytest_omk.report.otel import SpanSpec

FLUSH_DEADLINE_S = 15.0
"""The most the end of a run waits for the last spans to leave (each request also has the
exporter's own timeout, ``OTEL_EXPORTER_OTLP_TIMEOUT``, 10 s by default)."""
DEFAULT_SERVICE = "pytest-omk"
EXPORTER_LOGGERS = ("opentelemetry.exporter", "opentelemetry.sdk._shared_internal", "opentelemetry.sdk.trace")
"""The SDK's own loggers: their records become the one warning's reason instead of log lines."""
_HTTP_CODE = re.compile(r"code: (\d{3})")
Parent = tuple[int, int]
"""The run span's trace id and span id, which every process's sample spans hang under."""


def endpoint(environ: dict[str, str]) -> str:
    """Where the spans go, as the exporter reads the standard variables (shown without
    credentials or query in the warning)."""
    url = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if not url:
        base = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "http://localhost:4318"
        url = base.rstrip("/") + "/v1/traces"
    return strip_userinfo(url).split("?", 1)[0]


class _ExporterLog(logging.Handler):
    """Keeps the first warnings and errors the exporter logged: the reason of a failed export."""

    KEPT = 8

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.messages) >= self.KEPT:
            return
        try:
            self.messages.append(record.getMessage())
        except Exception:  # a record whose arguments do not format: keep the template
            self.messages.append(str(record.msg))


class FailOpenExporter(SpanExporter):
    """Sends through the OTLP exporter until one export fails; from then on drops at once."""

    def __init__(self, inner: SpanExporter, log: _ExporterLog) -> None:
        self.inner = inner
        self.log = log
        self.failure: str | None = None
        self.dropped = 0
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Export a batch, or drop it when an earlier one failed."""
        with self._lock:
            if self.failure is not None:
                self.dropped += len(spans)
                return SpanExportResult.FAILURE
        try:
            result = self.inner.export(spans)
            reason = None
        except Exception as exc:  # fail open: an exporter's bug is a lost batch, never a failed run
            result, reason = SpanExportResult.FAILURE, f"{type(exc).__name__}: {exc}"
        if result is not SpanExportResult.SUCCESS:
            with self._lock:
                self.failure = reason or short_reason(self.log.messages)
                self.dropped += len(spans)
        return result

    def shutdown(self) -> None:
        """Shut the OTLP exporter down."""
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered here (the batch processor holds the spans)."""
        return True


def short_reason(messages: Sequence[str]) -> str:
    """What the exporter logged, shortened to what the warning line needs: an HTTP status, a
    refused connection, else its first message's first line."""
    for message in messages:
        if (code := _HTTP_CODE.search(message)) is not None:
            return f"HTTP {code[1]}"
    if any("refused" in message.lower() for message in messages):
        return "connection refused"
    if not messages:
        return "the collector did not accept the spans"
    return messages[0].splitlines()[0].rstrip(".")[:160]


class Exporter:
    """One process's tracer provider: the run span (controller) and the sample spans."""

    def __init__(self, worker: str, parent: Parent | None) -> None:
        self.log = _ExporterLog()
        self._loggers = [logging.getLogger(name) for name in EXPORTER_LOGGERS]
        self._saved: list[tuple[bool, int]] = [(lg.propagate, lg.level) for lg in self._loggers]
        for lg in self._loggers:
            lg.addHandler(self.log)
            lg.propagate = False  # no SDK log lines in the tests' captured logs
        service = os.environ.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE
        resource = Resource.create(
            {"service.name": service, "omk.worker": worker, "omk.version": __version__}
        )
        self.exporter = FailOpenExporter(OTLPSpanExporter(), self.log)
        # shutdown_on_exit=False: the run flushes it itself, within a deadline, not at exit.
        self.provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self.provider.add_span_processor(
            BatchSpanProcessor(self.exporter, max_queue_size=65536, schedule_delay_millis=2000)
        )
        self.tracer = self.provider.get_tracer("pytest_omk", __version__)
        self.parent = parent
        self.root: trace.Span | None = None
        self.spans = 0
        self.problem: str | None = None

    def start_run(self, start_ns: int) -> Parent:
        """Start the run's span (the controller's); its ids are what the workers hang under."""
        self.root = self.tracer.start_span("omk.run", kind=SpanKind.INTERNAL, start_time=start_ns)
        context = self.root.get_span_context()
        self.parent = (context.trace_id, context.span_id)
        return self.parent

    def end_run(self, end_ns: int, attributes: dict[str, str | int]) -> None:
        """End the run's span with the run's counts."""
        if self.root is not None:
            self.root.set_attributes(attributes)
            self.root.end(end_time=end_ns)
            self.spans += 1

    def emit(self, spec: SpanSpec) -> None:
        """Create ``spec`` and its children as ended spans under the run's span."""
        parent = None
        if self.parent is not None:
            trace_id, span_id = self.parent
            remote = SpanContext(
                trace_id, span_id, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED)
            )
            parent = trace.set_span_in_context(NonRecordingSpan(remote))
        self._emit(spec, parent)

    def _emit(self, spec: SpanSpec, parent: Context | None) -> None:
        kind = SpanKind.CLIENT if spec.client else SpanKind.INTERNAL
        span = self.tracer.start_span(
            spec.name, context=parent, kind=kind, attributes=spec.attributes, start_time=spec.start_ns
        )
        for event in spec.events:
            span.add_event(event.name, event.attributes, timestamp=spec.end_ns)
        if spec.error:
            span.set_status(Status(StatusCode.ERROR))
        for child in spec.children:
            self._emit(child, trace.set_span_in_context(span))
        span.end(end_time=spec.end_ns)
        self.spans += 1

    def restore_logging(self) -> None:
        """Give the SDK's loggers back as they were (once; a run that never finished too)."""
        for lg, (propagate, level) in zip(self._loggers, self._saved, strict=True):
            lg.removeHandler(self.log)
            lg.propagate, lg.level = propagate, level
        self._loggers, self._saved = [], []

    def note_failure(self, reason: str) -> None:
        """A failure outside the export (a sample's spans not built): reported as an export's,
        without stopping the others."""
        if self.problem is None:
            self.problem = reason

    def finish(self) -> str | None:
        """Flush and shut down within :data:`FLUSH_DEADLINE_S`; the failure to report, if any."""
        done = threading.Event()

        def flush() -> None:
            try:
                self.provider.force_flush(int(FLUSH_DEADLINE_S * 1000))
                self.provider.shutdown()
            finally:
                done.set()

        # A daemon thread: an export stuck past the deadline is left behind, never waited for.
        threading.Thread(target=flush, name="omk-otel-flush", daemon=True).start()
        finished = done.wait(FLUSH_DEADLINE_S)
        self.restore_logging()
        if self.exporter.failure is not None or self.problem is not None:
            return self.exporter.failure or self.problem
        return None if finished else f"the export did not finish within {FLUSH_DEADLINE_S:g} s"
