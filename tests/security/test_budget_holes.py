"""Budgets fail closed for an app under test (issue 49, items 14 and 15).

Each probe runs an app whose model calls go through the model gateway to a loopback server that
counts the calls it gets (:class:`tests.fakes.metered_llm.MeteredLLM`): the calls the run really
made, whatever it says it made. Before the fix, a streamed answer, usage written as ``20.0`` and an
answer without usage counted 0 tokens (the cap never stopped the app), a negative count was a 500
from the gateway with the call never settled, and an app fanning out went past
``--omk-concurrency`` and the documented overshoot bound.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_omk.app.gateway import ModelGateway, upstreams_from
from pytest_omk.execute.budget import Budget, BudgetLimits
from pytest_omk.models.accounting import CallLedger
from pytest_omk.recordings.store import RecordingStore
from tests.fakes.metered_llm import MeteredLLM, anthropic_stream, openai_json, openai_stream
from tests.support import OmkRun, load_report, sample, write_sample_set

pytestmark = pytest.mark.probe("budget")

SAMPLES = 8
PER_CALL = 1000  # the tokens each answer below reports (400 in, 600 out)
CAP = 2500
HELLO = [{"type": "contains", "value": "hello"}]

APP = """
import os
from concurrent.futures import ThreadPoolExecutor

import httpx

HEADERS = {"authorization": "Bearer sk-x", "x-api-key": "sk-x", "anthropic-version": "2023-06-01"}
# One client for the app's calls, as an SDK keeps one: httpx.post builds a client (and loads its
# TLS certificates) per call, which cost more than everything else these probes do.
CLIENT = httpx.Client(timeout=30)


def _chat(prompt, **extra):
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": prompt}], **extra}
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    return CLIENT.post(base + "/chat/completions", json=body, headers=HEADERS)


def chat(request):
    reply = _chat(request.prompt)
    return "hello" if reply.status_code == 200 else f"status {reply.status_code}: {reply.text}"


def streamed(request):
    reply = _chat(request.prompt, stream=True, stream_options={"include_usage": True})
    return "hello" if reply.status_code == 200 else f"status {reply.status_code}"


def claude(request):
    body = {"model": "claude-3-5-haiku-latest", "max_tokens": 50, "stream": True,
            "messages": [{"role": "user", "content": request.prompt}]}
    base = os.environ["ANTHROPIC_BASE_URL"].rstrip("/")
    reply = CLIENT.post(base + "/v1/messages", json=body, headers=HEADERS)
    return "hello" if reply.status_code == 200 else f"status {reply.status_code}"


def fanout(request):
    with ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(lambda _: _chat(request.prompt).status_code, range(20)))
    return f"hello {codes.count(200)}"
"""


def _run_app(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    monkeypatch: pytest.MonkeyPatch,
    server: MeteredLLM,
    entry: str,
    *options: str,
    samples: int = SAMPLES,
) -> tuple[pytest.RunResult, dict[str, Any]]:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url + "/v1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-budget-holes")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-budget-holes")
    (pytester.path / "myapp.py").write_text(APP, encoding="utf-8")
    pytester.makeini("[pytest]\npythonpath = .\n")
    # Long prompts, none inside another: the gateway tells whose call it is by its prompt.
    write_sample_set(
        pytester,
        *[
            sample(f"s{i:02d}", f"Customer question number {i}: where is my order?", assertions=HELLO)
            for i in range(samples)
        ],
    )
    result = omk_run(f"--omk-executor=python:myapp:{entry}", "--omk-report=r.json", *options)
    return result, load_report(Path(pytester.path / "r.json"))


def _not_run(document: dict[str, Any]) -> int:
    return int(document["summary"]["budget"]["notRun"])


@pytest.mark.parametrize(
    ("entry", "body"),
    [
        ("streamed", openai_stream(400, 600)),
        ("claude", anthropic_stream(400, 600)),
        ("chat", openai_json({"prompt_tokens": 400.0, "completion_tokens": 600.0})),
    ],
    ids=["openai-stream", "anthropic-stream", "float-counts"],
)
def test_streamed_and_float_usage_counts_against_the_token_cap(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch, entry: str, body: str
) -> None:
    content_type = "application/json" if entry == "chat" else "text/event-stream"
    with MeteredLLM(body, content_type) as server:
        result, document = _run_app(
            pytester, omk_run, monkeypatch, server, entry, f"--omk-budget-tokens={CAP}", "--omk-concurrency=1"
        )
    budget = document["summary"]["budget"]
    # Each call's 1,000 tokens are read from the answer; the cap stops the app within one call
    # in flight of it (before the fix: 0 tokens a call, every sample ran).
    assert budget["tokens"] == PER_CALL * server.calls
    assert server.calls <= CAP // PER_CALL + 1, server.calls
    assert _not_run(document) == SAMPLES - server.calls
    assert document["summary"]["usage"]["model"]["spent"]["estimatedCalls"] == 0
    assert result.ret == 1


def test_an_answer_without_usage_counts_an_estimate_and_says_so(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MeteredLLM(openai_json(None)) as server:
        result, document = _run_app(
            pytester, omk_run, monkeypatch, server, "chat", "--omk-budget-tokens=200", "--omk-concurrency=1"
        )
    budget = document["summary"]["budget"]
    assert 1 <= server.calls < SAMPLES  # before the fix: every sample ran, counted as 0 tokens
    assert document["summary"]["usage"]["model"]["spent"]["estimatedCalls"] == server.calls
    assert budget["tokens"] > 0
    assert _not_run(document) == SAMPLES - server.calls
    assert "counted by an estimate" in result.stdout.str()


def test_a_fan_out_app_stays_within_the_concurrency_and_the_overshoot_bound(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    concurrency = 2
    with MeteredLLM(openai_json({"prompt_tokens": 400, "completion_tokens": 600})) as server:
        _, document = _run_app(
            pytester, omk_run, monkeypatch, server, "fanout",
            f"--omk-budget-tokens={CAP}", f"--omk-concurrency={concurrency}", samples=3,
        )  # fmt: skip
    # The documented bound: what fits under the cap, plus the calls in flight when it is reached
    # (before the fix: the first burst of 20 went out at once, 17 to 40 calls in all).
    assert server.calls <= CAP // PER_CALL + concurrency, server.calls
    assert server.most_at_once <= concurrency
    assert _not_run(document) == 3


@pytest.fixture(params=[-5, 20.5], ids=["negative", "fractional"])
def gateway_with_budget(
    tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[ModelGateway, Budget, MeteredLLM]]:
    with MeteredLLM(openai_json({"prompt_tokens": request.param, "completion_tokens": 600})) as server:
        store = RecordingStore(tmp_path / "rec", "off")
        budget = Budget(BudgetLimits(tokens=10_000), CallLedger())
        gateway = ModelGateway(store, upstreams_from({"OPENAI_BASE_URL": server.base_url + "/v1"}), timeout=10,
                               budget=budget)  # fmt: skip
        gateway.start()
        try:
            yield gateway, budget, server
        finally:
            gateway.stop()


def test_an_impossible_token_count_is_refused_cleanly_and_the_call_settled(
    gateway_with_budget: tuple[ModelGateway, Budget, MeteredLLM],
) -> None:
    gateway, budget, server = gateway_with_budget
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
    reply = httpx.post(gateway.env()["OPENAI_BASE_URL"] + "/chat/completions", json=body, timeout=10)
    # A clear refusal the app can read, not a 500 (before the fix the gateway's handler raised).
    assert reply.status_code == 502
    assert "invalid token count" in json.loads(reply.text)["error"]["message"]
    assert server.calls == 1
    # The call was made: it is settled (counted, by an estimate), no longer in flight.
    spent = budget.ledger.total()
    assert (spent.answered_live, spent.estimated) == (1, 1)
    assert spent.live_tokens > 0
