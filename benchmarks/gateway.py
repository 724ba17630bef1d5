"""The model gateway's own cost per call: a replayed call through it against a direct call.

One process, no pytest: the provider is the floor, a server on a thread of this process that
answers every request with one canned chat completion in a single write (no parsing beyond the
head and no Nagle stall: the least an HTTP round trip on loopback costs in Python); the gateway
runs here too, as it does in a pytest run. Each of N distinct chat completions is recorded once through the gateway
(live against the fake), then, round by round, interleaved and with a fresh replaying gateway per
round (``--omk-record-mode none``):

- ``socket``: a kept-alive ``http.client`` connection (not httpx, so the call really crosses the
  loopback socket, as a ``command:`` app's or a ``requests`` client's does) posts each request to
  the gateway, which replays it; against the same client posting the same requests straight to the
  server;
- ``in process``: a kept-alive ``httpx.Client`` (the openai SDK's transport), whose requests to
  the gateway are answered without the socket; against the same client calling the server directly.

The figure is the ratio of the median walls of each pair, measured in the same run, so the host's
speed cancels out. What the gateway adds: admitting the request, finding its sample, hashing its
identity, reading the recording, and (over the socket) speaking HTTP on the server's side.
"""

from __future__ import annotations

import contextlib
import json
import socketserver
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

from benchmarks import _support as s
from benchmarks.samples import CANNED_OUTPUT
from pytest_omk.app.gateway import ModelGateway, upstreams_from
from pytest_omk.recordings.store import RecordingStore

FULL, QUICK = 2_000, 300
ROUNDS = 5
TARGET = None
"""No bound: a replay through the gateway does far more per call (its checks, a hash, a file read,
the in-process answer's own bookkeeping) than a server writing a constant. The figure is the ratio
itself, compared before and after a change to the gateway (docs/performance.md)."""


class _Answer(socketserver.StreamRequestHandler):
    """Reads each request (head and ``content-length`` body) and answers the canned completion."""

    def handle(self) -> None:
        while self.rfile.readline():
            length = 0
            while (line := self.rfile.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            self.rfile.read(length)
            self.wfile.write(_ANSWER)  # one write: head and body in one segment


_BODY = json.dumps(
    {
        "id": "chatcmpl-floor",
        "object": "chat.completion",
        "model": "bench-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": CANNED_OUTPUT}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 40, "total_tokens": 60},
    }
).encode()
_ANSWER = (
    f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(_BODY)}\r\n\r\n".encode()
    + _BODY
)


@contextlib.contextmanager
def _floor() -> Iterator[str]:
    """The floor server on a thread; yields its OpenAI base URL."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Answer)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _bodies(directory: Path, count: int) -> Path:
    """N distinct chat-completion requests, one per line."""
    path = directory / "bodies.jsonl"
    lines = [
        json.dumps({"model": "bench-model", "messages": [{"role": "user", "content": f"question {i}"}]})
        for i in range(count)
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


CLIENT = """
import http.client, sys, time
from urllib.parse import urlsplit

url = urlsplit(sys.argv[1])
bodies = open(sys.argv[2], "rb").read().split(b"\\n")
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
started = time.perf_counter()
for body in bodies:
    connection.request("POST", url.path + "/chat/completions", body=body, headers=headers)
    reply = connection.getresponse()
    data = reply.read()
    if reply.status != 200:
        sys.exit(f"a call answered {reply.status}: {data[:200]!r}")
print(time.perf_counter() - started)
"""
"""The socket arm's client: another process, as a ``command:`` app is (no shared GIL)."""


def _over_socket(base: str, bodies: Path) -> tuple[float, float]:
    """The client process's wall, and this process's CPU meanwhile (the server side's work)."""
    cpu = time.process_time()
    done = subprocess.run(
        [s.PYTHON, "-c", CLIENT, base, str(bodies)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise s.BenchmarkError(f"the client failed: {done.stderr[-500:]}")
    return float(done.stdout), time.process_time() - cpu


def _with_httpx(base: str, bodies: Path) -> tuple[float, float]:
    """Wall and CPU of this process (client and server alike) for the calls with httpx."""
    headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
    payloads = bodies.read_bytes().split(b"\n")
    with httpx.Client(timeout=60) as client:
        started, cpu = time.perf_counter(), time.process_time()
        for body in payloads:
            reply = client.post(base + "/chat/completions", content=body, headers=headers)
            if reply.status_code != 200:
                raise s.BenchmarkError(f"a call answered {reply.status_code}: {reply.text[:200]!r}")
        return time.perf_counter() - started, time.process_time() - cpu


def _gateway(directory: Path, mode: str, upstream: str) -> ModelGateway:
    store = RecordingStore(directory, mode)  # type: ignore[arg-type]
    gateway = ModelGateway(store, upstreams_from({"OPENAI_BASE_URL": upstream}), timeout=60)
    gateway.start()
    return gateway


def _through(
    directory: Path, upstream: str, client: Callable[[str, Path], tuple[float, float]], bodies: Path
) -> tuple[float, float]:
    gateway = _gateway(directory, "none", upstream)
    try:
        return client(gateway.env()["OPENAI_BASE_URL"], bodies)
    finally:
        gateway.stop()


def run(quick: bool) -> list[s.Row]:
    """Record N calls through the gateway, then time each arm against its direct call, interleaved."""
    count = QUICK if quick else FULL
    measured: dict[str, list[tuple[float, float]]] = {
        arm: [] for arm in ("socket", "socket direct", "httpx", "httpx direct")
    }
    with s.workdir("gateway") as root, _floor() as url:
        bodies = _bodies(root, count)
        recorder = _gateway(root / "rec", "new_episodes", url)
        try:
            _over_socket(recorder.env()["OPENAI_BASE_URL"], bodies)
        finally:
            recorder.stop()
        arms: dict[str, Callable[[], tuple[float, float]]] = {
            "socket": lambda: _through(root / "rec", url, _over_socket, bodies),
            "socket direct": lambda: _over_socket(url, bodies),
            "httpx": lambda: _through(root / "rec", url, _with_httpx, bodies),
            "httpx direct": lambda: _with_httpx(url, bodies),
        }
        for index in range(ROUNDS):
            for arm in s.rotated(list(arms), index):
                measured[arm].append(arms[arm]())
    return [_row(arm, label, count, measured) for arm, label in ARMS]


ARMS = (
    ("socket", "over the socket (a client process), server CPU"),
    ("httpx", "in process (httpx), process CPU"),
)


def _row(arm: str, label: str, count: int, measured: dict[str, list[tuple[float, float]]]) -> s.Row:
    """The CPU ratio (steadier than walls on a loaded host), with both walls in the notes."""
    wall, cpu = (statistics.median(m[i] for m in measured[arm]) for i in (0, 1))
    wall_direct, cpu_direct = (statistics.median(m[i] for m in measured[f"{arm} direct"]) for i in (0, 1))
    return s.target_row(
        f"gateway replay {label}, {count} calls",
        cpu,
        cpu_direct,
        reference_label="direct call",
        limit=TARGET,
        notes=(
            f"{arm}: CPU {cpu / count * 1e6:.0f} µs per call through the gateway, "
            f"{cpu_direct / count * 1e6:.0f} µs direct; wall {wall / count * 1e6:.0f} µs against "
            f"{wall_direct / count * 1e6:.0f} µs ({wall / wall_direct:.2f}×)",
        ),
    )
