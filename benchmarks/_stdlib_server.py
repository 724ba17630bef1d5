"""A model server as plain as they come: the standard library's ``ThreadingHTTPServer``.

HTTP/1.1 with keep-alive, one thread per connection, every ``POST /v1/chat/completions`` answered
after a fixed latency with a canned chat completion. It stands for the many small OpenAI-compatible
servers written this way (and behaves unlike the project's fake in one way that matters: a
connection's requests are served one after another by its thread). Run as a child process::

    python -m benchmarks._stdlib_server --latency 0.25 --reply-file reply.txt

prints its port as the first line of stdout and serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def make_handler(latency: float, reply: str) -> type[BaseHTTPRequestHandler]:
    """A handler class answering every chat completion with ``reply`` after ``latency`` seconds."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Silent: a benchmark's server prints nothing per request."""

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            time.sleep(latency)
            body = json.dumps(
                {
                    "id": "chatcmpl-stdlib",
                    "object": "chat.completion",
                    "model": request.get("model", "stdlib"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 20, "completion_tokens": 40, "total_tokens": 60},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextlib.contextmanager
def serving(workdir: Path, *, latency: float, reply: str) -> Iterator[str]:
    """Run this server as a child process (its own process group); yields its OpenAI base URL."""
    from benchmarks import _support as s

    reply_file = workdir / "stdlib-reply.txt"
    reply_file.write_text(reply, encoding="utf-8")
    argv = [
        s.PYTHON,
        "-m",
        "benchmarks._stdlib_server",
        "--latency",
        str(latency),
        "--reply-file",
        str(reply_file),
    ]
    proc = subprocess.Popen(
        argv,
        cwd=s.REPO_ROOT,
        env=s.base_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    s._register(proc)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.isdigit():
            raise s.BenchmarkError(f"the standard-library server did not report a port (got {line!r})")
        yield f"http://127.0.0.1:{int(line)}/v1"
    finally:
        s._kill_group(proc, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        if proc.returncode is None:
            s._kill_group(proc)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        s._unregister(proc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--reply-file", type=Path, required=True)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(
        ("127.0.0.1", args.port), make_handler(args.latency, args.reply_file.read_text())
    )
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
