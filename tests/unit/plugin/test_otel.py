"""``--omk-otel``'s pytest side: the SDK stays unimported unless asked, the exporter's header values
count as secrets, and what the one warning line says."""

from __future__ import annotations

import json
import subprocess
import sys

from pytest_omk.plugin.otel import header_secrets
from pytest_omk.plugin.otel_export import endpoint, short_reason


def test_loading_the_plugin_imports_no_opentelemetry() -> None:
    # Start-up time: the SDK (and its protobuf) load only when --omk-otel is on.
    script = "import sys, json, pytest_omk.plugin; print(json.dumps([m for m in sys.modules if m.startswith(('opentelemetry', 'google.protobuf'))]))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_header_values_are_secrets_whole_decoded_and_word_by_word() -> None:
    environ = {
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20tok-123456789,x-key= k-abcdefgh ",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=trace-secret-1",
    }
    found = set(header_secrets(environ))
    assert {"Bearer%20tok-123456789", "Bearer tok-123456789", "tok-123456789", "k-abcdefgh"} <= found
    assert "trace-secret-1" in found
    assert header_secrets({}) == []


def test_the_endpoint_shown_is_the_exporters_without_credentials() -> None:
    assert endpoint({}) == "http://localhost:4318/v1/traces"
    assert (
        endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "https://u:pw@otel.example/"})
        == "https://otel.example/v1/traces"
    )
    traces = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b/t?k=s",
    }
    assert endpoint(traces) == "http://b/t"


def test_the_reason_is_short() -> None:
    assert short_reason(["Failed to export spans batch code: 503, reason: Service Unavailable"]) == "HTTP 503"
    assert (
        short_reason(["Transient error ... [Errno 111] Connection refused", "Failed"]) == "connection refused"
    )
    assert short_reason([]) == "the collector did not accept the spans"
    assert short_reason(["Failed to export due to timeout.\nmore"]) == "Failed to export due to timeout"
