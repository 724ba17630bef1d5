"""A replay-only run holds no transport: the stand-in keeps the key's parts and nothing else."""

from __future__ import annotations

import asyncio

import pytest

from pytest_omk.errors import ReplayMissError
from pytest_omk.execute.base import ExecutionRequest
from pytest_omk.execute.calls import executor_endpoint
from pytest_omk.execute.openai import OpenAIExecutor
from pytest_omk.execute.replay_only import ReplayOnly
from pytest_omk.recordings.endpoints import endpoint_key


def test_the_stand_in_keys_like_the_executor_and_cannot_call() -> None:
    real = OpenAIExecutor(base_url="http://127.0.0.1:9/v1", api_key="sk-never-leaves-the-machine")
    offline = ReplayOnly(real)
    assert (offline.id, offline.supports_mocks) == (real.id, real.supports_mocks)
    assert executor_endpoint(offline) == executor_endpoint(real) == "http://127.0.0.1:9/v1/chat/completions"
    assert "sk-never" not in repr(vars(offline))
    with pytest.raises(ReplayMissError, match="replays only"):
        asyncio.run(offline.execute(ExecutionRequest(prompt="hi", sample_id="s")))


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://api.openai.com/v1/chat/completions", "https://api.openai.com:443/v1/chat/completions"),
        ("https://API.openai.com:443/v1/chat/completions", "https://api.openai.com:443/v1/chat/completions"),
        ("http://user:secret@10.0.0.2:8000/v1", "http://10.0.0.2:8000/v1"),
        (
            "https://x.azure.com/openai?api-version=2024&api-key=sk-123&sig=abc",
            "https://x.azure.com:443/openai?api-version=2024",
        ),
        ("http://[::1]:11434/v1", "http://[::1]:11434/v1"),
    ],
)
def test_the_endpoint_key_has_scheme_host_port_path_and_no_credentials(url: str, key: str) -> None:
    assert endpoint_key(url) == key


def test_command_executors_have_no_endpoint() -> None:
    from pytest_omk.execute.local import EchoExecutor

    assert executor_endpoint(EchoExecutor()) is None
