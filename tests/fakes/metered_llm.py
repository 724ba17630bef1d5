"""A loopback model server that answers every call with one fixed body and counts the calls.

For budget probes: the answer's usage shape is the point (streamed, floats, missing, negative), so
the body is given as is, and the server counts what arrives (the calls the plugin really made, not
what it says it made) and the most calls it had in flight at once.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def openai_stream(prompt_tokens: Any, completion_tokens: Any) -> str:
    """A streamed chat completion whose last chunk carries the usage (``include_usage``)."""
    chunks = [
        {"object": "chat.completion.chunk", "model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"content": "hello"}}]},
        {"object": "chat.completion.chunk", "model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"content": " there"}}]},
        {"object": "chat.completion.chunk", "model": "gpt-4o-mini", "choices": [],
         "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}},
    ]  # fmt: skip
    return "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"


def anthropic_stream(input_tokens: int, output_tokens: int) -> str:
    """A streamed Messages answer: the prompt's tokens in ``message_start``, the output's in the
    last ``message_delta``."""
    events = [
        ("message_start", {"type": "message_start", "message": {
            "id": "m", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-latest", "content": [],
            "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hello there"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": output_tokens}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def openai_json(usage: Any) -> str:
    """A plain chat completion with ``usage`` as given (``None``: no usage at all)."""
    body: dict[str, Any] = {
        "id": "c",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hello there"}, "finish_reason": "stop"}
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body)


class MeteredLLM:
    """Serves ``body`` (of ``content_type``) to every POST; ``calls`` and ``most_at_once`` count."""

    def __init__(self, body: str, content_type: str = "application/json") -> None:
        self.body = body.encode("utf-8")
        self.content_type = content_type
        self.calls = 0
        self.most_at_once = 0
        self._at_once = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> MeteredLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with server._lock:
                    server.calls += 1
                    server._at_once += 1
                    server.most_at_once = max(server.most_at_once, server._at_once)
                try:
                    self.send_response(200)
                    self.send_header("content-type", server.content_type)
                    self.send_header("content-length", str(len(server.body)))
                    self.end_headers()
                    self.wfile.write(server.body)
                finally:
                    with server._lock:
                        server._at_once -= 1

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
