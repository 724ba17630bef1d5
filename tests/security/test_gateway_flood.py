"""A flood of connections to the model gateway (issue 49, attack 5).

Another process that knows the port opens connections and never finishes a request (slowloris).
Unbounded, the gateway accepted them until pytest had no descriptor left: the run ended in a bare
``OSError: [Errno 24]`` traceback, without its report. Now the gateway holds at most a quarter of the
process's descriptors, closes the connection that has waited longest for a head to make room, and
gives up on a head, a body or an idle connection after a deadline. When every allowed connection is
busy with a real request, the newcomer is refused and each open sample says why.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from pytest_omk.app.gateway import ModelGateway, upstreams_from
from pytest_omk.app.live import LiveApp
from pytest_omk.app.messages import Limits
from pytest_omk.errors import ExecutionError
from pytest_omk.execute.local import CallableExecutor
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.store import RecordingStore
from tests.fakes.fake_llm import FakeLLM
from tests.support import load_report, sample, write_sample_set

FLOOD = """
import resource, socket, sys

_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held, late = [], 0
for _ in range(1100):
    try:
        sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
        sock.sendall(b"POST / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n")  # half a head, never finished
        held.append(sock)
        late = 0
    except socket.timeout:
        late += 1
        if late == 5:
            break  # the server no longer accepts: its queue stays full
    except OSError:
        pass  # closed to make room for another
print(len(held), flush=True)
sys.stdin.read()  # hold them until the run ends
"""

APP = """
import os, subprocess, sys
from urllib.parse import urlsplit

import httpx

FLOOD = []


def answer(request):
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    if not FLOOD:  # another process floods the gateway's port before the first model call
        port = str(urlsplit(base).port)
        flood = subprocess.Popen([sys.executable, "flood.py", port], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        FLOOD.append(flood)
        flood.stdout.readline()
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": request.prompt}]}
    reply = httpx.post(base + "/chat/completions", json=body, timeout=30)
    reply.raise_for_status()
    return reply.json()["choices"][0]["message"]["content"]
"""

LIMITED = """
import resource, sys

_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
import atexit, os, threading, time

# The most descriptors the run ever holds, sampled from another thread: the gateway's cap is a
# quarter of the limit (64 here), so a flood must never bring the process near the limit itself.
peak = [0]


def sample():
    while True:
        try:
            peak[0] = max(peak[0], len(os.listdir("/proc/self/fd")))
        except OSError:  # no descriptor left even to look
            peak[0] = 256
        time.sleep(0.002)


threading.Thread(target=sample, daemon=True).start()
atexit.register(lambda: print(f"descriptors at most: {peak[0]}", file=sys.stderr))
import pytest

sys.exit(pytest.main(sys.argv[1:]))
"""


@pytest.mark.probe("local process")
@pytest.mark.multiprocess
def test_slowloris_under_a_low_descriptor_limit_leaves_the_run_and_its_report_whole(
    pytester: pytest.Pytester, fake_llm: FakeLLM
) -> None:
    fake_llm.add_rule("Where is my order", "It ships on Monday.")
    pytester.makeini("[pytest]\npythonpath = .\n")
    write_sample_set(
        pytester, sample("order", "Where is my order?", assertions=[{"type": "contains", "value": "Monday"}])
    )
    (pytester.path / "flood.py").write_text(FLOOD, encoding="utf-8")
    (pytester.path / "myapp.py").write_text(APP, encoding="utf-8")
    env = {**os.environ, "OPENAI_BASE_URL": fake_llm.openai_base_url, "OPENAI_API_KEY": "sk-flood-test"}
    env.pop("CI", None)
    argv = ["-p", "no:randomly", "-p", "no:cacheprovider", "--omk-executor", "python:myapp:answer"]
    argv += ["--omk-recordings", "rec", "--omk-record-mode", "new_episodes", "--omk-report", "r.json", "-q"]
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, *argv],
        cwd=pytester.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    # Before the listener accepted one connection at a time, asyncio's server accepted a hundred a
    # turn and the process reached its limit of 256 between turns (an import or a file opened then
    # failed); now it holds the cap, the newcomer and the run's own files: about 90.
    (held,) = (int(line.rsplit(" ", 1)[1]) for line in output.splitlines() if "descriptors at most" in line)
    assert held < 128, output[-3000:]
    assert "Too many open files" not in output and "Errno 24" not in output, output[-3000:]
    assert done.returncode == 0, output[-3000:]
    record = load_report(pytester.path / "r.json")
    assert json.dumps(record).count("It ships on Monday.") >= 1


@pytest.mark.probe("local process")
def test_a_saturated_gateway_is_the_samples_clear_error(fake_llm: FakeLLM, tmp_path: Path) -> None:
    store = RecordingStore(tmp_path / "rec", "new_episodes")
    upstreams = upstreams_from({"OPENAI_BASE_URL": fake_llm.openai_base_url})
    gateway = ModelGateway(store, upstreams, timeout=10, limits=Limits(connections=2))
    gateway.start()
    held: list[socket.socket] = []
    try:

        def answer(request: ExecutionRequest) -> str:
            assert request.model_env is not None
            url = urlsplit(request.model_env["OPENAI_BASE_URL"])
            for _ in range(2):  # two requests in progress: their heads admitted, their bodies awaited
                sock = socket.create_connection(("127.0.0.1", url.port or 0), timeout=10)
                sock.sendall(
                    f"POST {url.path}/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{url.port}\r\n"
                    "Content-Type: application/json\r\nContent-Length: 50\r\nExpect: 100-continue\r\n\r\n".encode()
                )
                assert sock.recv(100).startswith(b"HTTP/1.1 100")
                held.append(sock)
            third = socket.create_connection(("127.0.0.1", url.port or 0), timeout=10)
            assert third.recv(1000).startswith(b"HTTP/1.1 503")
            third.close()
            return "A made-up answer: the app swallowed the error."

        app = LiveApp(CallableExecutor(answer, name="tests:answer"), gateway)
        with pytest.raises(ExecutionError, match="saturated"):
            asyncio.run(app.execute(ExecutionRequest(prompt="hello", sample_id="s")))
    finally:
        for sock in held:
            sock.close()
        gateway.stop()
    assert fake_llm.requests == []
