"""An app under test runs for every call; a miss of any of its model calls is its sample's error."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_omk.app.gateway import ModelGateway, upstreams_from
from pytest_omk.app.live import LiveApp
from pytest_omk.errors import ExecutionError, ReplayMissError
from pytest_omk.execute.local import CallableExecutor
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.store import RecordingStore
from tests.fakes.fake_llm import FakeLLM


@pytest.fixture
def gateways(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[Any]:
    made: list[ModelGateway] = []
    base = fake_llm.base_url

    def make(mode: str) -> ModelGateway:
        store = RecordingStore(tmp_path / "rec", mode)  # type: ignore[arg-type]
        gateway = ModelGateway(store, upstreams_from({"OPENAI_BASE_URL": base + "/v1"}), timeout=10)
        gateway.start()
        made.append(gateway)
        return gateway

    yield make
    for gateway in made:
        gateway.stop()


def app(*, swallow: bool = False) -> CallableExecutor:
    """Asks the model at the URL the request names; ``swallow``: hides an HTTP error behind a made-up answer."""

    def answer(request: ExecutionRequest) -> str:
        assert request.model_env is not None
        url = request.model_env["OPENAI_BASE_URL"] + "/chat/completions"
        reply = httpx.post(
            url, json={"model": "m", "messages": [{"role": "user", "content": request.prompt}]}, timeout=10
        )
        if swallow and reply.status_code != 200:
            return "Sorry, I cannot help with that."
        reply.raise_for_status()
        return str(reply.json()["choices"][0]["message"]["content"])

    return CallableExecutor(answer, name="tests:answer")


def run(executor: LiveApp, prompt: str, sample_id: str = "s") -> Any:
    return asyncio.run(executor.execute(ExecutionRequest(prompt=prompt, sample_id=sample_id)))


def test_the_app_runs_every_time_and_reports_its_calls(gateways: Any, fake_llm: FakeLLM) -> None:
    fake_llm.add_rule("hello", "hi there")
    recorded = run(LiveApp(app(), gateways("new_episodes")), "hello")
    assert (recorded.output, recorded.replayed, recorded.appCalls.live, recorded.appCalls.replayed) == (
        "hi there",
        False,
        1,
        0,
    )
    replayed = run(LiveApp(app(), gateways("none")), "hello")
    assert (replayed.output, replayed.replayed, replayed.appCalls.live, replayed.appCalls.replayed) == (
        "hi there",
        True,
        0,
        1,
    )
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("swallow", [False, True], ids=["raises", "answers-anyway"])
def test_a_miss_is_the_samples_error_even_when_the_app_answers_anyway(gateways: Any, swallow: bool) -> None:
    executor = LiveApp(app(swallow=swallow), gateways("none"))
    with pytest.raises(ReplayMissError, match="No recording for sample 's'"):
        run(executor, "never recorded")


def test_an_app_failure_that_is_no_miss_stays_the_apps(gateways: Any) -> None:
    def broken(request: ExecutionRequest) -> str:
        raise ValueError("bad input")

    with pytest.raises(ExecutionError, match="raised ValueError: bad input") as caught:
        run(LiveApp(CallableExecutor(broken, name="tests:broken"), gateways("none")), "x")
    assert not isinstance(caught.value, ReplayMissError)


def test_whole_answers_need_the_digest(gateways: Any) -> None:
    executor = LiveApp(app(), gateways("none"), answers=True)
    assert executor.records_answers
    with pytest.raises(ExecutionError, match="digest is not known"):
        _ = executor.answer_identity
    assert LiveApp(app(), gateways("none")).answer_identity is None


def test_the_gateways_secret_is_one_of_the_apps_secrets(gateways: Any) -> None:
    # The secret is in the base URL, so in an app's HTTP errors: every sink scrubs it like a key.
    gateway = gateways("new_episodes")
    live = LiveApp(app(), gateway)
    assert gateway.secret in live.secrets and gateway.secret in gateway.env()["OPENAI_BASE_URL"]
