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
import json
import signal
import sys
import time
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
                        {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--reply-file", type=Path, required=True)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(args.latency, args.reply_file.read_text()))
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
