"""The model gateway answers only the run that made it (issue 49, attacks 1-4).

Any process on the machine reaches a loopback port: another user on a shared runner, a test of
untrusted code in the same job, a web page through DNS rebinding or a cross-site form. Each probe
here is such a caller, speaking raw HTTP over the socket as a foreign process would: it knows the
port (a port scan finds it), not the secret in the app's base URL.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from pytest_omk.app.gateway import ModelGateway, upstreams_from
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.store import RecordingStore
from tests.fakes.fake_llm import FakeLLM

PASSWORD = "hunter2-upstream-pw"
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "What is the capital of France?"}]}


@pytest.fixture
def make_gateway(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[Any]:
    started: list[ModelGateway] = []
    base = fake_llm.base_url

    def make(mode: str = "new_episodes", *, upstream: str | None = None) -> ModelGateway:
        store = RecordingStore(tmp_path / "rec", mode)  # type: ignore[arg-type]
        env = {"OPENAI_BASE_URL": upstream or base + "/v1", "ANTHROPIC_BASE_URL": base}
        gateway = ModelGateway(store, upstreams_from(env), timeout=10)
        gateway.start()
        started.append(gateway)
        return gateway

    yield make
    for gateway in started:
        gateway.stop()


def exchange(
    gateway: ModelGateway,
    path: str,
    *,
    host: str | None = None,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> tuple[int, bytes]:
    """One request over the socket, as a foreign process sends it: the status and the whole answer."""
    port = int(urlsplit(gateway.env()["OPENAI_BASE_URL"]).port or 0)
    data = json.dumps(CHAT).encode() if body is None else body
    lines = [f"POST {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in {"Content-Type": "application/json", **(headers or {})}.items()]
    lines.append(f"Content-Length: {len(data)}")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    answer = b"".join(chunks)
    return int(answer.split(b" ", 2)[1]), answer


def app_path(gateway: ModelGateway, run: Any = None) -> str:
    """The chat-completions path of the app's own base URL (secret included)."""
    return urlsplit(gateway.env(run)["OPENAI_BASE_URL"]).path + "/chat/completions"


def recordings(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "rec").rglob("*.json"))


@pytest.mark.probe("local process")
def test_a_foreign_process_that_knows_only_the_port_is_refused(
    make_gateway: Any, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.add_rule("capital", "Paris")
    gateway = make_gateway()
    for path in ("/_/openai/v1/chat/completions", "/guess/_/openai/v1/chat/completions"):
        status, answer = exchange(gateway, path)
        assert status == 403, answer
    assert fake_llm.requests == [] and recordings(tmp_path) == []  # nothing forwarded, nothing written
    status, _ = exchange(gateway, app_path(gateway))  # the app, holding the secret, is served
    assert status == 200 and len(fake_llm.requests) == 1


@pytest.mark.probe("local process")
def test_a_down_upstream_never_spells_its_password(make_gateway: Any, fake_llm: FakeLLM) -> None:
    gateway = make_gateway(upstream=f"http://user:{PASSWORD}@127.0.0.1:9/v1")
    status, answer = exchange(gateway, app_path(gateway))
    assert status == 502 and b"could not reach http://127.0.0.1:9/v1" in answer
    assert PASSWORD.encode() not in answer


@pytest.mark.probe("local process")
def test_dns_rebinding_a_foreign_host_is_refused_and_a_miss_explains_nothing_to_the_caller(
    make_gateway: Any, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.add_rule("capital", "Paris")
    recorder = make_gateway()
    assert exchange(recorder, app_path(recorder))[0] == 200  # recorded
    replayer = make_gateway("none")
    status, answer = exchange(replayer, app_path(replayer), host="attacker.example")
    assert status == 403 and b"Paris" not in answer
    # A near miss: the answer says there is none, not what was recorded nor where.
    near = json.dumps({**CHAT, "messages": [{"role": "user", "content": "What is the capital of Peru?"}]})
    status, answer = exchange(replayer, app_path(replayer), body=near.encode())
    assert status == 404
    assert b"France" not in answer and str(tmp_path).encode() not in answer and b"127.0.0.1" not in answer


@pytest.mark.probe("local process")
@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example", "Content-Type": "text/plain"},
        {"Origin": "https://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/x-www-form-urlencoded"},
    ],
)
def test_a_browsers_cross_site_post_is_neither_forwarded_nor_recorded(
    make_gateway: Any, fake_llm: FakeLLM, tmp_path: Path, headers: dict[str, str]
) -> None:
    fake_llm.add_rule("capital", "Paris")
    gateway = make_gateway()
    run = gateway.runs.open(ExecutionRequest(prompt="What is the capital of France?", sample_id="capital"))
    status, _ = exchange(gateway, app_path(gateway, run), headers=headers)
    assert status in (403, 415)
    assert fake_llm.requests == [] and recordings(tmp_path) == [] and (run.live, run.replayed) == (0, 0)


@pytest.mark.probe("local process")
def test_run_tokens_are_random_and_an_unknown_one_is_never_guessed_onto_a_run(
    make_gateway: Any, fake_llm: FakeLLM
) -> None:
    gateway = make_gateway("none")
    first = gateway.runs.open(ExecutionRequest(prompt="p", sample_id="one"))
    second = gateway.runs.open(ExecutionRequest(prompt="q", sample_id="two"))
    assert first.token != second.token and min(len(first.token), len(second.token)) >= 22  # 128 bits
    gateway.runs.close(second)
    mine = app_path(gateway, first)
    for token in ("s1", "s2", second.token):  # a counter's guesses, and a run that has ended
        status, _ = exchange(gateway, mine.replace(f"/{first.token}/", f"/{token}/"))
        assert status == 403
    assert first.misses == [] and first.errors == [] and (first.live, first.replayed) == (0, 0)


@pytest.mark.probe("local process")
def test_the_in_process_route_checks_the_secret_and_the_host_too(
    make_gateway: Any, fake_llm: FakeLLM
) -> None:
    # httpx requests to the gateway from this process are answered without the socket: same rules.
    fake_llm.add_rule("capital", "Paris")
    gateway = make_gateway()
    port = urlsplit(gateway.env()["OPENAI_BASE_URL"]).port
    assert httpx.post(f"http://127.0.0.1:{port}/_/openai/v1/chat/completions", json=CHAT).status_code == 403
    rebound = httpx.post(
        gateway.env()["OPENAI_BASE_URL"] + "/chat/completions",
        json=CHAT,
        headers={"host": "attacker.example"},
    )
    assert rebound.status_code == 403
    assert fake_llm.requests == []
    assert httpx.post(gateway.env()["OPENAI_BASE_URL"] + "/chat/completions", json=CHAT).status_code == 200
