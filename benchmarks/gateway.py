"""The model gateway's own cost per call: a replayed call through it against a direct call.

One process, no pytest: the provider is the standard library's plain HTTP server
(``benchmarks/_stdlib_server.py``, answering at once) in a child process; the gateway runs here, as
it does in a pytest run. Each of N distinct chat completions is recorded once through the gateway
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

import http.client
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from benchmarks import _support as s
from benchmarks._stdlib_server import serving
from benchmarks.samples import CANNED_OUTPUT
from pytest_omk.app.gateway import ModelGateway, upstreams_from
from pytest_omk.recordings.store import RecordingStore

FULL, QUICK = 2_000, 300
ROUNDS = 5
TARGET = 3.0
"""A replayed call through the gateway against a call to a server answering at once: the gateway
does more per call (its checks, a hash, a file read) than that server, so the bound is loose; the
figure to compare across changes is the ratio itself (docs/performance.md)."""


def _bodies(count: int) -> list[bytes]:
    return [
        json.dumps(
            {"model": "bench-model", "messages": [{"role": "user", "content": f"question {i}"}]}
        ).encode()
        for i in range(count)
    ]


def _over_socket(base: str, bodies: list[bytes]) -> float:
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=60)
    headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
    started = time.perf_counter()
    for body in bodies:
        connection.request("POST", url.path + "/chat/completions", body=body, headers=headers)
        reply = connection.getresponse()
        if reply.status != 200:
            raise s.BenchmarkError(f"a call answered {reply.status}: {reply.read()[:200]!r}")
        reply.read()
    wall = time.perf_counter() - started
    connection.close()
    return wall


def _with_httpx(base: str, bodies: list[bytes]) -> float:
    headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
    with httpx.Client(timeout=60) as client:
        started = time.perf_counter()
        for body in bodies:
            reply = client.post(base + "/chat/completions", content=body, headers=headers)
            if reply.status_code != 200:
                raise s.BenchmarkError(f"a call answered {reply.status_code}: {reply.text[:200]!r}")
        return time.perf_counter() - started


def _gateway(directory: Path, mode: str, upstream: str) -> ModelGateway:
    store = RecordingStore(directory, mode)  # type: ignore[arg-type]
    gateway = ModelGateway(store, upstreams_from({"OPENAI_BASE_URL": upstream}), timeout=60)
    gateway.start()
    return gateway


def _through(
    directory: Path, upstream: str, client: Callable[[str, list[bytes]], float], bodies: list[bytes]
) -> float:
    gateway = _gateway(directory, "none", upstream)
    try:
        return client(gateway.env()["OPENAI_BASE_URL"], bodies)
    finally:
        gateway.stop()


def run(quick: bool) -> list[s.Row]:
    """Record N calls through the gateway, then time each arm against its direct call, interleaved."""
    count = QUICK if quick else FULL
    bodies = _bodies(count)
    walls: dict[str, list[float]] = {"socket": [], "socket direct": [], "httpx": [], "httpx direct": []}
    with (
        s.workdir("gateway") as root,
        serving(root, latency=0.0, reply=CANNED_OUTPUT) as url,
    ):
        recorder = _gateway(root / "rec", "new_episodes", url)
        try:
            _over_socket(recorder.env()["OPENAI_BASE_URL"], bodies)
        finally:
            recorder.stop()
        arms: dict[str, Callable[[], float]] = {
            "socket": lambda: _through(root / "rec", url, _over_socket, bodies),
            "socket direct": lambda: _over_socket(url, bodies),
            "httpx": lambda: _through(root / "rec", url, _with_httpx, bodies),
            "httpx direct": lambda: _with_httpx(url, bodies),
        }
        for index in range(ROUNDS):
            for arm in s.rotated(list(arms), index):
                walls[arm].append(arms[arm]())
    median = {arm: statistics.median(values) for arm, values in walls.items()}
    rows = []
    for arm, label in (("socket", "over the socket (http.client)"), ("httpx", "in process (httpx)")):
        per_call = median[arm] / count * 1e6
        direct = median[f"{arm} direct"] / count * 1e6
        rows.append(
            s.target_row(
                f"gateway replay {label}, {count} calls",
                median[arm],
                median[f"{arm} direct"],
                reference_label="direct call",
                limit=TARGET,
                notes=(
                    f"{arm}: {per_call:.0f} µs per call through the gateway, {direct:.0f} µs direct; "
                    f"walls {', '.join(f'{w:.2f}' for w in walls[arm])} s against "
                    f"{', '.join(f'{w:.2f}' for w in walls[f'{arm} direct'])} s",
                ),
            )
        )
    return rows
