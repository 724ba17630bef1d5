"""Fixtures of the real-server tier: llama.cpp's HTTP server, through ``xllamacpp``, serving a model
generated on the spot with ``gguf`` (:mod:`tests.support.tiny_model`). Nothing is downloaded.

- ``tiny_models``: the two generated models (``bpe`` and ``spm`` vocabularies), once per session.
- ``llama_server``: a factory, ``start(vocabulary="bpe", slots=1, context=2048) -> LlamaServer``,
  starting the server as a child process on a free loopback port; every server started is stopped
  at teardown. ``LlamaServer.stop()`` ends one mid-test.
- ``llama_env``: one ``bpe`` server with 2 slots and 16 HTTP threads, ``OPENAI_BASE_URL`` and ``ANTHROPIC_BASE_URL``
  pointing at it (and a placeholder Anthropic key, which llama.cpp does not check).

Without the ``realserver`` extra (``pip install -e '.[test,realserver]'``) every test here is
skipped with one reason; under ``CI`` that is a failure instead.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.llama_cpp import ANTHROPIC_PLACEHOLDER_KEY, LlamaServer, StartServer, start_llama_server

MISSING = "real-server tier: xllamacpp and gguf are not installed (pip install -e '.[test,realserver]')"
"""The one skip reason of every test of the tier."""


@pytest.fixture(scope="session", autouse=True)
def _tier_installed() -> None:
    """Skip the tier when its extra is missing; in CI (``CI`` set) fail instead."""
    if all(importlib.util.find_spec(name) is not None for name in ("xllamacpp", "gguf")):
        return
    if os.environ.get("CI"):
        pytest.fail(f"{MISSING} (CI is set, so this is a failure, not a skip)")
    pytest.skip(MISSING)


@pytest.fixture(autouse=True)
def _offline(no_provider_env: None) -> None:
    """No provider variable from the outside reaches these runs (the tests set their own)."""


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny model in both vocabulary styles, written once per session."""
    from tests.support.tiny_model import write_model

    folder = tmp_path_factory.mktemp("tiny-models")
    return {
        vocabulary: write_model(folder / f"tiny-{vocabulary}.gguf", vocabulary)
        for vocabulary in ("bpe", "spm")
    }


@pytest.fixture
def llama_server(
    tiny_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StartServer]:
    """``start(vocabulary="bpe", slots=1, context=2048, http_threads=None, ignore_eos=False)``: a
    server on loopback.

    ``context`` is per slot (a judge prompt takes about 1,400 tokens). ``http_threads`` is
    llama-server's ``--threads-http``; by default ``slots + 2``, what llama-server chooses on a
    machine of 2 or 3 cores, so that connections beyond it wait the same way on any machine.
    ``ignore_eos``: the model never ends its turn, so every answer runs to a limit (a check that
    must not depend on where the random model happens to stop).
    """
    started: list[LlamaServer] = []

    def start(
        vocabulary: str = "bpe",
        *,
        slots: int = 1,
        context: int = 2048,
        http_threads: int | None = None,
        ignore_eos: bool = False,
    ) -> LlamaServer:
        log = tmp_path_factory.mktemp("llama-server") / "server.log"
        threads = slots + 2 if http_threads is None else http_threads
        server = start_llama_server(
            tiny_models[vocabulary],
            log,
            slots=slots,
            context=context,
            http_threads=threads,
            ignore_eos=ignore_eos,
        )
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def llama_env(llama_server: StartServer, monkeypatch: pytest.MonkeyPatch) -> LlamaServer:
    """A ``bpe`` server with 2 slots, with the provider variables pointing at it.

    HTTP threads to spare: at the run's default concurrency (8) no connection waits for a thread
    (with llama-server's own default, 4 here, the calls beyond it waited out 5 s keep-alives).
    """
    server = llama_server(slots=2, http_threads=16)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_PLACEHOLDER_KEY)
    return server
