"""httpx requests to a gateway of this process are answered without a socket, and only those.

Each test counts the connections the loopback server accepted: zero for a request answered in
process, one for a request that went over the socket.
"""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_omk.app import in_process
from pytest_omk.app.gateway import ModelGateway, upstreams_from
from pytest_omk.app.messages import HttpRequest, HttpResponse
from pytest_omk.app.server import LoopbackServer
from pytest_omk.recordings.store import RecordingStore
from tests.fakes.fake_llm import FakeLLM

ORIGINAL_SYNC = httpx.HTTPTransport.handle_request
ORIGINAL_ASYNC = httpx.AsyncHTTPTransport.handle_async_request


class Echo:
    """A handler that answers with what it was given, and remembers it."""

    def __init__(self, delay: float = 0.0) -> None:
        self.seen: list[HttpRequest] = []
        self.delay = delay

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        self.seen.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        if request.target.startswith("/boom"):
            raise RuntimeError("handler bug")
        body = json.dumps({"method": request.method, "target": request.target, "body": request.body.decode()})
        return HttpResponse(201, body.encode(), {"content-type": "application/json", "x-echo": "yes"})


@pytest.fixture
def servers() -> Iterator[Any]:
    started: list[LoopbackServer] = []

    def start(handler: Any, *, attach: bool = True) -> LoopbackServer:
        server = LoopbackServer(handler)
        server.start()
        started.append(server)
        if attach:
            in_process.attach(server)
        return server

    yield start
    for server in started:
        in_process.detach(server)
        server.stop()
    assert httpx.HTTPTransport.handle_request is ORIGINAL_SYNC
    assert httpx.AsyncHTTPTransport.handle_async_request is ORIGINAL_ASYNC


def test_a_sync_client_is_answered_without_a_connection(servers: Any) -> None:
    echo = Echo()
    server = servers(echo)
    with httpx.Client() as client:
        reply = client.post(
            f"http://127.0.0.1:{server.port}/_/openai/v1/chat?x=1",
            content=b'{"a": 1}',
            headers=[("X-Tag", "one"), ("X-Tag", "two"), ("Content-Type", "application/json")],
        )
    assert reply.status_code == 201
    assert reply.headers["x-echo"] == "yes"
    assert reply.json() == {"method": "POST", "target": "/_/openai/v1/chat?x=1", "body": '{"a": 1}'}
    # What the handler saw is what the socket's parser would have given it.
    assert echo.seen[0].headers["x-tag"] == "one, two"
    assert echo.seen[0].headers["host"] == f"127.0.0.1:{server.port}"
    assert server.accepted == 0


def test_an_async_client_is_answered_without_a_connection(servers: Any) -> None:
    server = servers(Echo())

    async def call() -> httpx.Response:
        async with httpx.AsyncClient() as client:
            return await client.get(f"http://127.0.0.1:{server.port}/ping")

    reply = asyncio.run(call())
    assert reply.status_code == 201
    assert reply.json()["target"] == "/ping"
    assert server.accepted == 0


def test_other_addresses_and_detached_gateways_go_over_the_socket(servers: Any) -> None:
    attached = servers(Echo())
    other = servers(Echo(), attach=False)
    assert httpx.get(f"http://127.0.0.1:{other.port}/x").status_code == 201
    assert other.accepted == 1

    in_process.detach(attached)
    assert httpx.HTTPTransport.handle_request is ORIGINAL_SYNC  # the last one removed the patch
    assert httpx.get(f"http://127.0.0.1:{attached.port}/x").status_code == 201
    assert attached.accepted == 1


def test_detaching_one_gateway_keeps_the_other_in_process(servers: Any) -> None:
    first, second = servers(Echo()), servers(Echo())
    in_process.detach(first)
    httpx.get(f"http://127.0.0.1:{second.port}/x")
    httpx.get(f"http://127.0.0.1:{first.port}/x")
    assert (first.accepted, second.accepted) == (1, 0)


def test_a_handler_bug_is_a_500_answer_as_over_the_socket(servers: Any) -> None:
    server = servers(Echo())
    reply = httpx.get(f"http://127.0.0.1:{server.port}/boom")
    assert reply.status_code == 500
    assert "RuntimeError: handler bug" in reply.text


def test_the_clients_read_timeout_applies(servers: Any) -> None:
    server = servers(Echo(delay=2.0))
    with pytest.raises(httpx.ReadTimeout):
        httpx.get(f"http://127.0.0.1:{server.port}/slow", timeout=httpx.Timeout(5.0, read=0.1))

    async def call() -> None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(5.0, read=0.1)) as client:
            await client.get(f"http://127.0.0.1:{server.port}/slow")

    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(call())


def test_a_call_recorded_in_process_replays_over_the_socket(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """The two ways in give the gateway the same request, so they share recordings."""
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Say hi."}]}
    env = {"OPENAI_BASE_URL": fake_llm.base_url + "/v1", "ANTHROPIC_BASE_URL": fake_llm.base_url}

    recording = ModelGateway(
        RecordingStore(tmp_path / "rec", "new_episodes"), upstreams_from(env), timeout=10
    )
    recording.start()
    try:
        live = httpx.post(recording.env()["OPENAI_BASE_URL"] + "/chat/completions", json=body, timeout=10)
    finally:
        recording.stop()
    assert live.status_code == 200, live.text
    assert len(fake_llm.requests) == 1

    replaying = ModelGateway(RecordingStore(tmp_path / "rec", "none"), upstreams_from(env), timeout=10)
    replaying.start()
    try:
        # urllib is not httpx: this request reaches the gateway over its socket.
        request = urllib.request.Request(
            replaying.env()["OPENAI_BASE_URL"] + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            replayed = json.loads(reply.read())
    finally:
        replaying.stop()
    assert replayed["choices"][0]["message"]["content"] == live.json()["choices"][0]["message"]["content"]
    assert len(fake_llm.requests) == 1


class Quick:
    """A quick answer that answers ``/quick`` itself, leaves the rest, and breaks on ``/broken``."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def __call__(self, request: HttpRequest) -> HttpResponse | None:
        self.threads.append(threading.get_ident())
        if request.target == "/broken":
            raise RuntimeError("quick path bug")
        return HttpResponse(200, b"quick") if request.target == "/quick" else None


def test_a_quick_answer_is_made_on_the_callers_thread_and_the_rest_goes_to_the_loop() -> None:
    echo, quick = Echo(), Quick()
    server = LoopbackServer(echo, quick=quick)
    server.start()
    in_process.attach(server)
    try:
        assert httpx.get(f"http://127.0.0.1:{server.port}/quick").text == "quick"
        assert echo.seen == []  # the loop's handler never saw it
        assert httpx.get(f"http://127.0.0.1:{server.port}/other").status_code == 201
        assert httpx.get(f"http://127.0.0.1:{server.port}/broken").status_code == 201  # fell back
        assert [seen.target for seen in echo.seen] == ["/other", "/broken"]
        assert quick.threads == [threading.get_ident()] * 3
        assert server.accepted == 0
    finally:
        in_process.detach(server)
        server.stop()


def test_a_replay_through_the_gateway_is_answered_on_the_callers_thread(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Say hi."}]}
    env = {"OPENAI_BASE_URL": fake_llm.base_url + "/v1", "ANTHROPIC_BASE_URL": fake_llm.base_url}
    plain = ModelGateway.replay_now

    def gateway(mode: str) -> tuple[ModelGateway, list[HttpResponse | None]]:
        answers: list[HttpResponse | None] = []

        def watched(self: ModelGateway, request: HttpRequest) -> HttpResponse | None:
            answers.append(plain(self, request))
            return answers[-1]

        # Watched before the gateway is made: its server takes the quick answer when it is built.
        monkeypatch.setattr(ModelGateway, "replay_now", watched)
        made = ModelGateway(RecordingStore(tmp_path / "rec", mode), upstreams_from(env), timeout=10)  # type: ignore[arg-type]
        made.start()
        return made, answers

    recording, first = gateway("new_episodes")
    try:
        live = httpx.post(recording.env()["OPENAI_BASE_URL"] + "/chat/completions", json=body, timeout=10)
    finally:
        recording.stop()
    assert live.status_code == 200 and first == [None]  # nothing recorded yet: the loop called live

    replaying, second = gateway("none")
    try:
        for _ in range(2):  # the second is a repeat: replay-only mode replays the last recorded
            again = httpx.post(
                replaying.env()["OPENAI_BASE_URL"] + "/chat/completions", json=body, timeout=10
            )
            assert again.json() == live.json()
        missed = httpx.post(
            replaying.env()["OPENAI_BASE_URL"] + "/chat/completions",
            json={**body, "model": "gpt-4.1"},
            timeout=10,
        )
    finally:
        replaying.stop()
    assert [answer is not None for answer in second] == [True, True, False]
    assert missed.status_code == 404 and "model" in missed.text  # the loop's path named the field
    assert len(fake_llm.requests) == 1
