"""Fixtures for the loopback fake model server (:mod:`tests.fakes.fake_llm`).

- ``fake_llm``: a fresh server per test (starting one costs about a millisecond).
- ``fake_llm_session``: one server for the session; call ``.reset()`` before scripting it.
- ``fake_llm_env``: ``fake_llm`` with ``OPENAI_*`` / ``ANTHROPIC_*`` pointing at it (fake keys).
- ``fake_llm_process``: a factory starting the server as a child process, for pytester
  subprocess runs and benchmarks; every process started is stopped at teardown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM, FakeLLMProcess

FAKE_OPENAI_KEY = "sk-fake-openai-key-for-tests"
FAKE_ANTHROPIC_KEY = "sk-ant-fake-anthropic-key-for-tests"


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A scripted OpenAI/Anthropic fake server on 127.0.0.1, stopped after the test."""
    with FakeLLM() as server:
        yield server


@pytest.fixture(scope="session")
def fake_llm_session() -> Iterator[FakeLLM]:
    """One fake server for the whole session (shared state: ``.reset()`` it first)."""
    with FakeLLM() as server:
        yield server


@pytest.fixture
def fake_llm_env(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    """``fake_llm`` with the provider environment variables pointing at it."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY)
    return fake_llm


@pytest.fixture
def fake_llm_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., FakeLLMProcess]]:
    """``start(script=None) -> FakeLLMProcess``: run the fake as a child process."""
    started: list[FakeLLMProcess] = []

    def start(script: Mapping[str, Any] | None = None) -> FakeLLMProcess:
        workdir: Path = tmp_path_factory.mktemp("fake-llm")
        process = FakeLLMProcess(workdir, script)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()
