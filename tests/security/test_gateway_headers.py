"""Recorded headers are data, not bytes (issue 49, attack 17).

A committed recording is hostile input: its content type is written into the app's HTTP answer. One
holding CR LF would add headers of the file's choosing (``Set-Cookie``) or split the answer and
desynchronise a kept-alive connection. Such a recording, or one with a status outside 200-599, is
unusable (an error naming the file), and the server refuses to write any header holding a control
character, whatever hands it one.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from pytest_omk.app.gateway import ModelGateway, upstreams_from
from pytest_omk.app.messages import HttpRequest, HttpResponse
from pytest_omk.app.server import LoopbackServer
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.store import RecordingStore
from tests.fakes.fake_llm import FakeLLM

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "What is the capital of France?"}]}


@pytest.fixture
def recorded(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[Any]:
    """A recording made live, then a replay-only gateway over it once ``tamper`` has edited it."""
    started: list[ModelGateway] = []
    env = {"OPENAI_BASE_URL": fake_llm.base_url + "/v1", "ANTHROPIC_BASE_URL": fake_llm.base_url}
    fake_llm.add_rule("capital", "Paris")

    def make(mode: str) -> ModelGateway:
        gateway = ModelGateway(RecordingStore(tmp_path / "rec", mode), upstreams_from(env), timeout=10)  # type: ignore[arg-type]
        gateway.start()
        started.append(gateway)
        return gateway

    recorder = make("new_episodes")
    assert exchange(recorder, None)[0] == 200
    [path] = sorted((tmp_path / "rec").rglob("*.json"))

    def tamper(**result: Any) -> tuple[ModelGateway, Path]:
        document = json.loads(path.read_text(encoding="utf-8"))
        document["result"].update(result)
        path.write_text(json.dumps(document), encoding="utf-8")
        return make("none"), path

    yield tamper
    for gateway in started:
        gateway.stop()


def exchange(gateway: ModelGateway, run: Any) -> tuple[int, bytes]:
    """The app's call over the socket (its own base URL): the status and the whole answer."""
    url = urlsplit(gateway.env(run)["OPENAI_BASE_URL"])
    data = json.dumps(CHAT).encode()
    head = (
        f"POST {url.path}/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{url.port}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    return raw(int(url.port or 0), head.encode() + data)


def raw(port: int, data: bytes) -> tuple[int, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    answer = b"".join(chunks)
    return int(answer.split(b" ", 2)[1]), answer


@pytest.mark.probe("hostile recording")
@pytest.mark.parametrize(
    ("result", "named"),
    [
        ({"contentType": "application/json\r\nSet-Cookie: session=attacker"}, "contentType"),
        ({"contentType": "application/json\nX-Injected: 1"}, "contentType"),
        ({"contentType": "text/html\x00"}, "contentType"),
        ({"status": 700}, "status"),
        ({"status": 101}, "status"),
    ],
)
def test_a_recording_with_a_forged_header_is_unusable_and_named(
    recorded: Any, result: dict[str, Any], named: str
) -> None:
    gateway, path = recorded(**result)
    run = gateway.runs.open(ExecutionRequest(prompt="What is the capital of France?", sample_id="capital"))
    status, answer = exchange(gateway, run)
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert b"set-cookie" not in head and b"x-injected" not in head and b"paris" not in answer.lower()
    assert status >= 400
    [message] = run.misses
    assert str(path) in message and f"result.{named}" in message


@pytest.mark.probe("hostile recording")
def test_the_server_never_writes_a_header_holding_a_control_character() -> None:
    async def forged(request: HttpRequest) -> HttpResponse:
        return HttpResponse(200, b"{}", {"content-type": "application/json\r\nSet-Cookie: session=attacker"})

    server = LoopbackServer(forged)
    server.start()
    try:
        status, answer = raw(server.port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    finally:
        server.stop()
    assert status == 500 and b"set-cookie" not in answer.split(b"\r\n\r\n", 1)[0].lower()
