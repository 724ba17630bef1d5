"""The process side of an app under test: provider variables pointed at the gateway and put back."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pytest_omk.app.host import AppGateway, FixtureApp, app_target
from pytest_omk.app.keys import REPLAY_KEY
from pytest_omk.errors import ExecutionError
from pytest_omk.execute.local import CallableExecutor, CommandExecutor
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.modes import RecordMode
from pytest_omk.recordings.store import RecordingStore


def answer(request: ExecutionRequest) -> str:
    return "ok"


def test_in_process_the_variables_point_at_the_gateway_until_stopped(tmp_path: Path) -> None:
    environ = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-real-key-for-the-test"}
    app = AppGateway(RecordingStore(tmp_path, "new_episodes"), environ, timeout=5)
    app.start(in_process=True)
    port = app.gateway._server.port
    base = f"http://127.0.0.1:{port}/{app.gateway.env()['OPENAI_BASE_URL'].split('/')[3]}"
    assert len(base.rsplit("/", 1)[1]) >= 32  # the process's secret: 192 random bits
    assert environ["OPENAI_BASE_URL"] == f"{base}/_/openai/v1"
    assert environ["ANTHROPIC_BASE_URL"] == f"{base}/_/anthropic"
    assert environ["OPENAI_API_KEY"] == "sk-real-key-for-the-test"  # keys are the app's own
    assert app.gateway.upstreams == {
        "openai": "http://127.0.0.1:9/v1",
        "anthropic": "https://api.anthropic.com",
    }
    app.stop()
    assert environ == {
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "OPENAI_API_KEY": "sk-real-key-for-the-test",
    }


@pytest.mark.parametrize("mode", ["none", "new_episodes", "all"])
def test_every_mode_hands_a_stand_in_key_to_an_app_that_has_none(tmp_path: Path, mode: RecordMode) -> None:
    environ: dict[str, str] = {}
    app = AppGateway(RecordingStore(tmp_path, mode), environ, timeout=5)
    app.start(in_process=False)
    assert environ == {}  # a command's variables are its own, per sample
    per_sample = app.gateway.env()
    assert per_sample["OPENAI_API_KEY"] == per_sample["ANTHROPIC_API_KEY"] == REPLAY_KEY
    app.stop()


def test_the_fixture_app_is_bound_later(tmp_path: Path) -> None:
    fixture = FixtureApp(supports_mocks=True)
    assert (fixture.id, fixture.bound, fixture.supports_mocks, fixture.target) == (
        "fixture:omk_app",
        False,
        True,
        None,
    )
    with pytest.raises(ExecutionError, match="not been set up"):
        asyncio.run(fixture.execute(ExecutionRequest(prompt="p")))
    fixture.bind(CallableExecutor(answer, name="tests:answer"))
    assert (fixture.id, fixture.bound, fixture.target) == ("python:tests:answer", True, answer)
    assert asyncio.run(fixture.execute(ExecutionRequest(prompt="p"))).output == "ok"


def test_the_users_object_behind_an_executor() -> None:
    assert app_target(CallableExecutor(answer, name="x")) is answer
    assert app_target(CommandExecutor("python app.py", timeout=5)) is None
