"""The call loop's warm-up: what the first wave of calls would otherwise wait for is done ahead.

httpx imports its connection pool when the first client is built and its async backend when the
first request connects (about 30 ms together on the reference machine): inside the first call,
which every call of the first wave then waits behind. ``preload_transport`` imports them, and
builds the run's TLS context, before any call is submitted.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pytest_omk.run.loop import TRANSPORT_MODULES

# A fresh interpreter: this test process has imported httpx's transport long ago.
SCRIPT = """
import asyncio, http.server, json, sys, threading

from pytest_omk.execute.http_client import ApiEndpoint, JsonApiClient
from pytest_omk.execute.tls import SharedTls
from pytest_omk.run.loop import preload_transport


class Answer(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
threading.Thread(target=server.serve_forever, daemon=True).start()
PRELOAD = sys.argv[1] == "preload"
TRANSPORT = ("httpx", "httpcore", "h11", "anyio", "sniffio")


async def main():
    tls = SharedTls()
    if PRELOAD:
        await preload_transport(tls)
    before = set(sys.modules)
    endpoint = ApiEndpoint(provider="openai", url=f"http://127.0.0.1:{server.server_port}/v1", headers={}, api_key=None)
    client = JsonApiClient(endpoint, timeout=10)
    client.share_tls(tls)
    await client.warm()
    answer, _ = await client.post({"hello": "world"})
    await client.aclose()
    late = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in TRANSPORT)
    print(json.dumps({"answer": answer, "late": late, "builds": tls.builds}))


asyncio.run(main())
server.shutdown()
"""


def _first_call(mode: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, object] = json.loads(out)
    return result


def test_after_the_preload_the_first_call_imports_nothing_of_the_transport() -> None:
    result = _first_call("preload")
    assert result == {"answer": {}, "late": [], "builds": 1}


def test_without_it_the_first_call_imports_the_transport_itself() -> None:
    # The counterpart: the modules the preload names are the ones a first call would import.
    result = _first_call("cold")
    late = result["late"]
    assert isinstance(late, list) and result["answer"] == {} and result["builds"] == 1
    assert {"httpcore", "h11", "anyio._backends._asyncio"} <= set(late)


@pytest.mark.parametrize("name", TRANSPORT_MODULES)
def test_every_named_module_exists_in_the_installed_httpx_stack(name: str) -> None:
    # A name that no longer exists would be skipped silently at run time; here it fails.
    import importlib

    importlib.import_module(name)
