"""The model gateway: an app's model calls replayed or recorded through the store, by content.

Real sockets throughout: the gateway listens on loopback, the fake provider too, and the "app" is
an httpx client pointed at the gateway's base URL, as an SDK would be through ``OPENAI_BASE_URL``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_omk.app.gateway import ModelGateway, upstreams_from
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.store import RecordingStore
from tests.fakes.fake_llm import FakeLLM

KEY = "sk-gateway-unit-sentinel-93ab10fe"


def chat(prompt: str, system: str = "Be brief.") -> dict[str, Any]:
    return {
        "model": "gpt-4o-mini",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
    }


@pytest.fixture
def make_gateway(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[Any]:
    started: list[ModelGateway] = []

    base = fake_llm.base_url  # kept: some tests stop the fake before a replaying gateway is made

    def make(mode: str = "new_episodes", *, upstream: str | None = None) -> ModelGateway:
        store = RecordingStore(tmp_path / "rec", mode, secrets=[KEY])  # type: ignore[arg-type]
        env = {"OPENAI_BASE_URL": upstream or base + "/v1", "ANTHROPIC_BASE_URL": base}
        gateway = ModelGateway(store, upstreams_from(env), timeout=10)
        gateway.start()
        started.append(gateway)
        return gateway

    yield make
    for gateway in started:
        gateway.stop()


def post(
    gateway: ModelGateway, body: dict[str, Any], *, run: Any = None, path: str = "/chat/completions"
) -> httpx.Response:
    base = gateway.env(run)["OPENAI_BASE_URL"]
    return httpx.post(base + path, json=body, headers={"authorization": f"Bearer {KEY}"}, timeout=10)


def text_of(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return str(response.json()["choices"][0]["message"]["content"])


def stored(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((tmp_path / "rec").rglob("*.json"))]


def test_a_live_call_is_forwarded_recorded_and_then_replayed(
    make_gateway: Any, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.add_rule("capital of France", "Paris")
    assert text_of(post(make_gateway(), chat("What is the capital of France?"))) == "Paris"
    assert fake_llm.requests[0].headers["authorization"] == f"Bearer {KEY}"  # the app's own key goes on
    assert text_of(post(make_gateway(), chat("What is the capital of France?"))) == "Paris"  # the next run
    assert len(fake_llm.requests) == 1
    [document] = stored(tmp_path)
    assert document["kind"] == "http" and document["method"] == "POST"
    assert document["endpoint"] == fake_llm.openai_base_url.replace("/v1", "/v1/chat/completions")
    assert document["body"]["messages"][1]["content"] == "What is the capital of France?"
    assert KEY not in json.dumps(document) and "authorization" not in json.dumps(document).lower()


def test_replay_only_answers_from_recordings_and_a_miss_names_the_field(
    make_gateway: Any, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.add_rule("capital", "Paris")
    recorder = make_gateway()
    text_of(post(recorder, chat("capital?")))
    fake_llm.stop()
    replayer = make_gateway("none")
    assert text_of(post(replayer, chat("capital?"))) == "Paris"
    run = replayer.runs.open(ExecutionRequest(prompt="capital?", sample_id="capital"))
    missed = post(replayer, chat("capital?", system="Be verbose."), run=run)
    assert missed.status_code == 404 and missed.headers["x-should-retry"] == "false"
    # The explanation is the run's (its sample's report), not the caller's.
    assert "messages[0].content: 'Be verbose.' (this run) vs 'Be brief.' (recorded)" in run.misses[0]
    assert "Be brief" not in missed.text and str(tmp_path) not in missed.text


def test_provider_errors_are_forwarded_and_never_recorded(
    make_gateway: Any, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.inject("rate_limit", first=1, retry_after="0")
    fake_llm.add_rule("hello", "hi")
    gateway = make_gateway()
    refused = post(gateway, chat("hello"))
    assert refused.status_code == 429 and refused.headers["retry-after"] == "0"
    assert stored(tmp_path) == []
    assert text_of(post(gateway, chat("hello"))) == "hi"  # the retry: occurrence 0 again
    assert [d["occurrence"] for d in stored(tmp_path)] == [0]


def test_the_same_request_twice_gets_two_recordings_and_replays_both(
    make_gateway: Any, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.add_rule("pick a number", replies=["1", "2"])
    gateway = make_gateway()
    assert [text_of(post(gateway, chat("pick a number"))) for _ in range(2)] == ["1", "2"]
    fake_llm.stop()
    replayer = make_gateway("none")
    assert [text_of(post(replayer, chat("pick a number"))) for _ in range(3)] == ["1", "2", "2"]


def test_a_run_named_in_the_url_labels_its_calls_and_counts_them(
    make_gateway: Any, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.add_rule("weather", "sunny")
    gateway = make_gateway()
    run = gateway.runs.open(
        ExecutionRequest(prompt="p", sample_id="weather-1", source=tmp_path / "eval-samples.json")
    )
    text_of(post(gateway, chat("weather?"), run=run))
    gateway.runs.close(run)
    assert (run.live, run.replayed) == (1, 0)
    [document] = stored(tmp_path)
    assert document["label"] == "weather-1" and document["file"] == "../eval-samples.json"


def test_a_shared_url_is_attributed_by_the_prompt_it_carries(make_gateway: Any, fake_llm: FakeLLM) -> None:
    gateway = make_gateway()
    runs = [
        gateway.runs.open(ExecutionRequest(prompt=f"question number {i} please", sample_id=f"q{i}"))
        for i in range(3)
    ]
    text_of(post(gateway, chat("Answer: question number 1 please")))
    assert [(r.live, r.replayed) for r in runs] == [(0, 0), (1, 0), (0, 0)]


def test_an_unattributable_miss_is_blamed_on_every_open_run(make_gateway: Any) -> None:
    gateway = make_gateway("none")
    runs = [
        gateway.runs.open(ExecutionRequest(prompt=f"prompt {i} of two", sample_id=f"q{i}")) for i in range(2)
    ]
    assert post(gateway, chat("something else")).status_code == 404
    assert all(len(run.misses) == 1 for run in runs)
    assert all("No recording" in run.misses[0] for run in runs)


def test_an_unreachable_provider_is_a_502_and_not_recorded(make_gateway: Any, tmp_path: Path) -> None:
    gateway = make_gateway(upstream="http://127.0.0.1:9/v1")
    response = post(gateway, chat("anyone?"))
    assert response.status_code == 502 and "could not reach" in response.json()["error"]["message"]
    assert stored(tmp_path) == []


def test_an_unknown_route_is_a_404(make_gateway: Any) -> None:
    gateway = make_gateway()
    response = httpx.get(
        gateway.env()["OPENAI_BASE_URL"].replace("/openai", "/gemini") + "/models", timeout=10
    )
    assert response.status_code == 404 and "no such route" in response.json()["error"]["message"]
