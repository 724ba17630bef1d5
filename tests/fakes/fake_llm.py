"""A real HTTP server on 127.0.0.1 that plays an OpenAI-compatible and an Anthropic model.

It speaks ``POST /v1/chat/completions`` and ``POST /v1/messages`` so that the executors' real
httpx code runs end to end, answers from a script (:mod:`tests.fakes.llm_script`), injects
faults, and records every request for assertions. In-process use::

    with FakeLLM() as llm:
        llm.add_rule("capital of France", "Paris")
        llm.inject("rate_limit", first=1, retry_after=0)
        ...  # point OPENAI_BASE_URL at llm.openai_base_url
        assert len(llm.requests) == 2

As a process (pytester subprocess tests, benchmarks)::

    python -m tests.fakes.fake_llm --port 0 --script script.json [--record calls.jsonl]

prints the chosen port as its first stdout line and serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from tests.fakes.llm_http import Handler, Server
from tests.fakes.llm_script import (
    Answer,
    Api,
    Fault,
    FaultTrigger,
    Reply,
    Rule,
    to_answer,
    to_fault,
    to_rule,
    to_trigger,
)
from tests.fakes.llm_shapes import conversation, error_body, first_user, reply_body, tool_results

ROUTES: dict[str, Api] = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it, and what it did about it (``reply`` or a fault kind)."""

    method: str
    path: str
    headers: Mapping[str, str]
    """Header names in lower case."""
    body: Any
    api: Api | None
    user: str
    system: str
    outcome: str
    prompt: str = ""
    """The first user message (the task of an agent conversation)."""
    tool_result: str = ""
    """The tool results sent since the model's last answer (``""`` when none)."""


class FakeLLM:
    """The scripted fake model server (see the module docstring)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        script: Mapping[str, Any] | None = None,
        record_path: Path | None = None,
    ) -> None:
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: Server | None = None
        self._thread: threading.Thread | None = None
        self._record_path = record_path
        self._requests: list[RecordedRequest] = []
        self._serial = 0
        self.default: Answer = Reply()
        self.latency = 0.0
        self._rules: list[Rule] = []
        self._faults: list[FaultTrigger] = []
        self._gate: tuple[int, float] | None = None
        self._gate_open = threading.Condition(self._lock)
        self._arrived = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        """The most requests the server held at once (``reset`` clears it)."""
        self.script(script)

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> FakeLLM:
        """Bind and serve in a background thread."""
        if self._httpd is None:
            self._stopping.clear()
            self._httpd = Server((self._host, self._port), self._serve, self._stopping)
            # A short poll interval: shutdown() waits up to one interval, and tests stop servers a lot.
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, args=(0.02,), name="fake-llm", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging handlers are released. Safe to call twice."""
        self._stopping.set()
        with self._lock:
            self._gate_open.notify_all()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            if self._thread is not None:
                self._thread.join(5)
            self._httpd = self._thread = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._httpd is None:
            raise RuntimeError("the fake LLM server is not running")
        return int(self._httpd.server_address[1])

    @property
    def connections(self) -> int:
        """TCP connections the server has accepted since it started."""
        return self._httpd.accepted if self._httpd is not None else 0

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the ``ANTHROPIC_BASE_URL`` form)."""
        return f"http://{self._host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the ``OPENAI_BASE_URL`` form)."""
        return self.base_url + "/v1"

    # -- scripting -------------------------------------------------------------------------------

    def script(
        self,
        spec: Mapping[str, Any] | None = None,
        *,
        default: Any = None,
        rules: Sequence[Mapping[str, Any]] = (),
        faults: Sequence[Mapping[str, Any]] = (),
        latency: float | None = None,
    ) -> FakeLLM:
        """Replace rules, faults, default reply and latency (recorded requests are kept)."""
        spec = dict(spec or {})
        with self._lock:
            self.default = to_answer(spec.get("default", "fake reply") if default is None else default)
            self.latency = float(spec.get("latency", 0.0) if latency is None else latency)
            self._rules = [to_rule(r) for r in [*spec.get("rules", ()), *rules]]
            self._faults = [to_trigger(f) for f in [*spec.get("faults", ()), *faults]]
        return self

    def add_rule(
        self,
        match: str | None = None,
        reply: Any = None,
        *,
        replies: Sequence[Any] = (),
        system: str | None = None,
        api: Api | None = None,
        predicate: Callable[[RecordedRequest], bool] | None = None,
        latency: float | None = None,
        prompt: str | None = None,
        tool_result: str | None = None,
    ) -> Rule:
        """Answer requests whose last user message contains ``match`` (and whose system prompt
        contains ``system``, first user message ``prompt``, latest tool results ``tool_result``...)
        with ``reply``, or with ``replies`` in order."""
        answers = [to_answer(r) for r in (replies or [reply if reply is not None else ""])]
        rule = Rule(
            answers,
            match=match,
            system=system,
            api=api,
            predicate=predicate,
            latency=latency,
            prompt=prompt,
            tool_result=tool_result,
        )
        with self._lock:
            self._rules.append(rule)
        return rule

    def inject(
        self,
        fault: str | Fault | Mapping[str, Any],
        *,
        first: int | None = None,
        every: bool = False,
        probability: float = 0.0,
        seed: int | None = 0,
        match: str | None = None,
        api: Api | None = None,
        unless: str | None = None,
        **fields: Any,
    ) -> FaultTrigger:
        """Inject ``fault`` (a kind plus :class:`Fault` fields) on the first N calls, every call,
        or with ``probability`` (seeded). Triggers are tried in the order they were added."""
        spec = to_fault({"kind": fault, **fields} if isinstance(fault, str) else fault)
        trigger = FaultTrigger(
            spec,
            first=first,
            every=every,
            probability=probability,
            seed=seed,
            match=match,
            api=api,
            unless=unless,
        )
        with self._lock:
            self._faults.append(trigger)
        return trigger

    def gate(self, count: int, timeout: float) -> None:
        """Hold every request until ``count`` requests have arrived (or ``timeout`` seconds pass),
        so that a test proves, by counting, that that many calls were in flight at once."""
        with self._lock:
            self._gate, self._arrived = (count, timeout), 0

    def reset(self) -> None:
        """Forget the script, the gate and the recorded requests."""
        self.script()
        with self._lock:
            self._requests.clear()
            self._gate, self._arrived, self.peak_in_flight = None, 0, 0

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            if self._gate is None:
                return
            count, timeout = self._gate
            self._arrived += 1
            self._gate_open.notify_all()
            self._gate_open.wait_for(lambda: self._arrived >= count or self._stopping.is_set(), timeout)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    # -- serving ---------------------------------------------------------------------------------

    def _decide(
        self, api: Api, user: str, system: str, probe: RecordedRequest
    ) -> tuple[Answer, Reply, float]:
        """The answer to act out, the reply whose body a ``drop``/``slow_body`` fault carries, the delay."""
        with self._lock:
            # Triggers are tried in order and stop at the first that fires, so ``first=1`` faults
            # added one after another play out one after another.
            fault = next((t.fault for t in self._faults if t.fires(api, user)), None)
            rule = next((r for r in self._rules if r.matches(api, user, system, probe)), None)
            delay = self.latency if rule is None or rule.latency is None else rule.latency
            if fault is not None and fault.kind != "slow_body":
                # The call fails, so the scripted reply stays for the retry.
                underlying = rule.peek() if rule else self.default
            else:
                underlying = rule.next_answer() if rule else self.default
            carried = underlying if isinstance(underlying, Reply) else Reply()
            return (fault or underlying), carried, delay

    def _record(self, request: RecordedRequest) -> int:
        with self._lock:
            self._requests.append(request)
            self._serial += 1
            if self._record_path is not None:
                with self._record_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({**asdict(request), "headers": dict(request.headers)}) + "\n")
            return self._serial

    def _serve(self, handler: Handler, body: Any) -> None:
        self._enter()
        try:
            self._handle(handler, body)
        finally:
            self._leave()

    def _handle(self, handler: Handler, body: Any) -> None:
        path = handler.path.split("?", 1)[0]
        api = ROUTES.get(path)
        headers = {k.lower(): v for k, v in handler.headers.items()}
        user, system, _ = conversation(api, body) if api else ("", "", [])
        agent = (first_user(api, body), tool_results(api, body)) if api else ("", "")
        probe = RecordedRequest(handler.command, path, headers, body, api, user, system, "", *agent)
        if api is None:
            self._record(replace(probe, outcome="not_found"))
            handler.send_json(404, error_body(None, Fault("status", message=f"no route POST {path}")))
            return
        answer, carried, delay = self._decide(api, user, system, probe)
        outcome = answer.kind if isinstance(answer, Fault) else "reply"
        serial = self._record(
            RecordedRequest(handler.command, path, headers, body, api, user, system, outcome, *agent)
        )
        if isinstance(answer, Reply) and answer.latency:
            delay = answer.latency
        if delay and self._stopping.wait(delay):
            return
        if isinstance(answer, Reply):
            handler.send_json(200, reply_body(api, answer, body, serial))
        else:
            good = json.dumps(reply_body(api, carried, body, serial)).encode()
            self._act_out(handler, api, answer, good)

    def _act_out(self, handler: Handler, api: Api, fault: Fault, good: bytes) -> None:
        if fault.kind == "hang":
            self._stopping.wait(30.0 if fault.seconds is None else fault.seconds)
            handler.drop()
        elif fault.kind == "garbage":
            handler.send_bytes(200, b"this is not JSON {<html>")
        elif fault.kind == "drop":
            handler.drop(good)
        elif fault.kind == "slow_body":
            handler.send_bytes(200, good, chunk_delay=0.05 if fault.seconds is None else fault.seconds)
        else:
            extra = {"retry-after": fault.retry_after} if fault.retry_after is not None else None
            handler.send_json(fault.http_status(), error_body(api, fault), extra)


REPO_ROOT = Path(__file__).resolve().parents[2]


class FakeLLMProcess:
    """The fake server in a child process, for tests whose code under test runs in another process.

    ``script`` is written to ``workdir/fake-llm-script.json`` and every request is appended to
    ``workdir/fake-llm-requests.jsonl`` (read back with :meth:`requests`).
    """

    def __init__(self, workdir: Path, script: Mapping[str, Any] | None = None) -> None:
        self.script_path = workdir / "fake-llm-script.json"
        self.record_path = workdir / "fake-llm-requests.jsonl"
        self.script_path.write_text(json.dumps(script or {}), encoding="utf-8")
        cmd = [sys.executable, "-m", "tests.fakes.fake_llm", "--port", "0"]
        cmd += ["--script", str(self.script_path), "--record", str(self.record_path)]
        self._proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().strip()
        if not line.isdigit():
            self.stop()
            raise RuntimeError(f"the fake LLM process did not report a port (got {line!r})")
        self.port = int(line)
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.openai_base_url = self.base_url + "/v1"

    def requests(self) -> list[dict[str, Any]]:
        """The requests served so far, as JSON objects (``path``, ``headers``, ``body``, ``outcome``...)."""
        if not self.record_path.exists():
            return []
        lines = self.record_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def stop(self) -> None:
        """Terminate the process (killed if it does not exit within 5 s)."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until SIGTERM/SIGINT; the first stdout line is the port."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.fake_llm", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", type=Path, help="JSON script (see tests/fakes/llm_script.py)")
    parser.add_argument("--record", type=Path, help="append every request as a JSON line to this file")
    args = parser.parse_args(argv)
    script = json.loads(args.script.read_text(encoding="utf-8")) if args.script else None
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    with FakeLLM(args.host, args.port, script=script, record_path=args.record) as server:
        print(server.port, flush=True)
        while not done.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
