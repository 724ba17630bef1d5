"""``--omk-otel`` as an output surface: what reaches the collector, and what a hostile or dead
collector can do to the run (docs/security.md, "Telemetry").

The run's secrets (a provider key in the output, a base URL's password, the exporter's own header
values) never reach the collector, with ``--omk-otel-content`` too; a collector that never answers,
or answers with an error whose reason phrase carries terminal escapes, costs one plain warning line
and never a failed or hanging run.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from tests.support import FakeCommand, OmkRun, executor_arg, sample, write_sample_set
from tests.support.otlp import OtlpReceiver
from tests.support.wrapped import unwrapped

probe = pytest.mark.probe
API_KEY = "sk-otelprobe-4c1d9e2f7a"
PASSWORD = "pw-otelprobe-88e1"
HEADER = "hdr-otelprobe-3b7f10"


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    started = OtlpReceiver().start()
    yield started
    started.stop()


def _project(pytester: pytest.Pytester, fake_command: FakeCommand, output: str) -> str:
    write_sample_set(
        pytester, sample("s", prompt=f"use {API_KEY}", assertions=[{"type": "contains", "value": "zz"}])
    )
    return executor_arg(fake_command.script({"s": {"output": output, "inputTokens": 1, "outputTokens": 1}}))


def _point_at(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")


@probe("secrets")
def test_no_secret_reaches_the_collector_even_with_content(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, receiver: OtlpReceiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    _point_at(monkeypatch, receiver.endpoint)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("OMK_DOCS_URL", f"https://bot:{PASSWORD}@docs.example")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"authorization=Bearer {HEADER}")
    output = f"leaking {API_KEY} and {PASSWORD} and {HEADER}"
    executor = _project(pytester, fake_command, output)
    omk_run(executor, "--omk-otel", "--omk-otel-content").assert_outcomes(failed=2)
    sent = b"".join(receiver.raw)
    assert b"leaking" in sent, "the content was sent (the probe would prove nothing otherwise)"
    for secret in (API_KEY, PASSWORD, HEADER):
        assert secret.encode() not in sent, secret
    assert receiver.headers and all(h["authorization"] == f"Bearer {HEADER}" for h in receiver.headers)


@probe("hostile collector")
def test_a_collector_that_never_answers_costs_one_warning(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Accepts connections (the backlog) and never reads or answers: only the timeouts end the export.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    try:
        _point_at(monkeypatch, f"http://127.0.0.1:{silent.getsockname()[1]}")
        executor = _project(pytester, fake_command, "an answer")
        result = omk_run(executor, "--omk-otel")
    finally:
        silent.close()
    result.assert_outcomes(failed=2)  # the sample's own failed check, nothing more
    lines = [line for line in unwrapped(result).lines if "OpenTelemetry" in line]
    assert len(lines) == 1, lines


class _HostileReason(OtlpReceiver):
    """Answers every export with a 400 whose reason phrase carries terminal escapes."""

    def start(self) -> _HostileReason:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        self.listener = listener

        def serve() -> None:
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                with conn:
                    conn.recv(65536)
                    conn.sendall(
                        b"HTTP/1.1 400 \x1b]0;pwned\x07\x1b[2J\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    )

        threading.Thread(target=serve, daemon=True).start()
        return self

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def stop(self) -> None:
        self.listener.close()


@probe("hostile collector")
def test_a_collector_error_cannot_write_escapes_to_the_terminal(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = _HostileReason().start()
    try:
        _point_at(monkeypatch, hostile.endpoint)
        executor = _project(pytester, fake_command, "an answer")
        result = omk_run(executor, "--omk-otel")
    finally:
        hostile.stop()
    result.assert_outcomes(failed=2)
    lines = [line for line in unwrapped(result).lines if "OpenTelemetry" in line]
    assert len(lines) == 1 and "HTTP 400" in lines[0], lines
    text = result.stdout.str() + result.stderr.str()
    assert "\x1b" not in text and "\x07" not in text
