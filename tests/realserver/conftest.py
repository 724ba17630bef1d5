"""Fixtures of the real-server tier: llama.cpp's HTTP server, through ``xllamacpp``, serving a model
generated on the spot with ``gguf`` (:mod:`tests.realserver.tiny_model`). Nothing is downloaded.

- ``tiny_models``: the two generated models (``bpe`` and ``spm`` vocabularies), once per session.
- ``llama_server``: a factory, ``start(vocabulary="bpe", slots=1, context=2048) -> LlamaServer``,
  starting the server as a child process on a free loopback port; every server started is stopped
  at teardown. ``LlamaServer.stop()`` ends one mid-test.
- ``llama_env``: one ``bpe`` server with 2 slots, ``OPENAI_BASE_URL`` and ``ANTHROPIC_BASE_URL``
  pointing at it (and a placeholder Anthropic key, which llama.cpp does not check).

Without the ``realserver`` extra (``pip install -e '.[test,realserver]'``) every test here is
skipped with one reason; under ``CI`` that is a failure instead.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.conftest import _no_provider_env, omk_run  # noqa: F401  (fixtures)

REPO = Path(__file__).resolve().parents[2]
MISSING = "real-server tier: xllamacpp and gguf are not installed (pip install -e '.[test,realserver]')"
"""The one skip reason of every test of the tier."""
ANTHROPIC_PLACEHOLDER_KEY = "sk-ant-placeholder-llama-cpp-checks-no-key"


@pytest.fixture(scope="session", autouse=True)
def _tier_installed() -> None:
    """Skip the tier when its extra is missing; in CI (``CI`` set) fail instead."""
    if all(importlib.util.find_spec(name) is not None for name in ("xllamacpp", "gguf")):
        return
    if os.environ.get("CI"):
        pytest.fail(f"{MISSING} (CI is set, so this is a failure, not a skip)")
    pytest.skip(MISSING)


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny model in both vocabulary styles, written once per session."""
    from tests.realserver.tiny_model import write_model

    folder = tmp_path_factory.mktemp("tiny-models")
    return {
        vocabulary: write_model(folder / f"tiny-{vocabulary}.gguf", vocabulary)
        for vocabulary in ("bpe", "spm")
    }


@dataclass
class LlamaServer:
    """One llama.cpp server process."""

    process: subprocess.Popen[str]
    base_url: str
    """``http://127.0.0.1:PORT`` (the ``ANTHROPIC_BASE_URL`` and ``OPENAI_BASE_URL`` form alike)."""
    log: Path
    """llama.cpp's log (stderr)."""
    model: Path

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    @property
    def served_model(self) -> str:
        """The name llama.cpp answers with, whatever model name the request asked for."""
        return self.model.name

    def stop(self) -> None:
        """End the server (killed if it does not exit within 10 s). Safe to call twice."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()

    def log_lines(self, needle: str) -> list[str]:
        """The log lines containing ``needle``."""
        return [
            line
            for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines()
            if needle in line
        ]


StartServer = Callable[..., LlamaServer]


@pytest.fixture
def llama_server(
    tiny_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StartServer]:
    """``start(vocabulary="bpe", slots=1, context=2048, http_threads=None)``: a server on loopback.

    ``context`` is per slot (a judge prompt takes about 1,400 tokens). ``http_threads`` is llama-server's ``--threads-http``; by default it
    is ``slots + 2``, what llama-server chooses on a machine of 2 or 3 cores, so that connections
    beyond it wait the same way on any machine.
    """
    started: list[LlamaServer] = []

    def start(
        vocabulary: str = "bpe", *, slots: int = 1, context: int = 2048, http_threads: int | None = None
    ) -> LlamaServer:
        model = tiny_models[vocabulary]
        log = tmp_path_factory.mktemp("llama-server") / "server.log"
        threads = slots + 2 if http_threads is None else http_threads
        cmd = [sys.executable, "-m", "tests.realserver.serve", str(model), "--slots", str(slots)]
        cmd += ["--context", str(context), "--http-threads", str(threads)]
        with log.open("w", encoding="utf-8") as stderr:
            process = subprocess.Popen(
                cmd, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True
            )
        assert process.stdout is not None
        address = process.stdout.readline().strip()
        server = LlamaServer(process, address, log, model)
        started.append(server)
        if not address.startswith("http://127.0.0.1:"):
            server.stop()
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise RuntimeError(
                f"llama.cpp's server did not start (printed {address!r}); its log ends:\n{tail}"
            )
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def llama_env(llama_server: StartServer, monkeypatch: pytest.MonkeyPatch) -> LlamaServer:
    """A ``bpe`` server with 2 slots, with the provider variables pointing at it."""
    server = llama_server(slots=2)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_PLACEHOLDER_KEY)
    return server
