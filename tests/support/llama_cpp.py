"""llama.cpp's HTTP server (through ``xllamacpp``) as a child process, for the real-server tier.

:func:`start_llama_server` runs ``python -m tests.support.llama_serve`` on a model file and waits for
the address it prints; :class:`LlamaServer` is the running process. Nothing here imports
``xllamacpp`` or ``gguf``: the child process does (the tier's ``conftest.py`` skips without them).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ANTHROPIC_PLACEHOLDER_KEY = "sk-ant-placeholder-llama-cpp-checks-no-key"
"""The Anthropic executor will not call without a key; llama.cpp checks none."""


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
"""``start(vocabulary="bpe", *, slots=1, context=2048, http_threads=None, ignore_eos=False) -> LlamaServer``."""


def start_llama_server(
    model: Path, log: Path, *, slots: int, context: int, http_threads: int, ignore_eos: bool = False
) -> LlamaServer:
    """Start the server on ``model`` (``context`` tokens per slot); llama.cpp's log goes to ``log``."""
    cmd = [sys.executable, "-m", "tests.support.llama_serve", str(model), "--slots", str(slots)]
    cmd += [
        "--context",
        str(context),
        "--http-threads",
        str(http_threads),
        *(["--ignore-eos"] if ignore_eos else []),
    ]
    with log.open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            cmd, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True
        )
    assert process.stdout is not None
    address = process.stdout.readline().strip()
    server = LlamaServer(process, address, log, model)
    if not address.startswith("http://127.0.0.1:"):
        server.stop()
        tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise RuntimeError(f"llama.cpp's server did not start (printed {address!r}); its log ends:\n{tail}")
    return server
