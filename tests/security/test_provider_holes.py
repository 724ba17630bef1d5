"""Hostile provider bodies, command results, pages and addresses (issue #15).

Each test is one hole the hostile review found; each failed before the fix.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from pytest_omk.errors import ExecutionError
from pytest_omk.execute.base import ExecutionRequest, TransientError
from pytest_omk.execute.http_client import MAX_RESPONSE_BYTES
from pytest_omk.execute.local import parse_result
from pytest_omk.execute.openai import OpenAIExecutor
from pytest_omk.models.results import ExecutionResult
from pytest_omk.resolve.content import html_to_text
from pytest_omk.resolve.safe_http import SafeHttpFetcher, blocked_range
from tests.fakes.doc_server import DocServer, Page
from tests.support.dns import LOOP, StubDns

probe = pytest.mark.probe
KEY = "sk-probe-0123456789abcdef0123"


def call_openai(handler: Callable[[httpx.Request], httpx.Response]) -> ExecutionResult:
    executor = OpenAIExecutor(
        5, base_url="http://fake.invalid", api_key=KEY, transport=httpx.MockTransport(handler)
    )

    async def go() -> ExecutionResult:
        try:
            return await executor.execute(ExecutionRequest(prompt="hello", model="gpt-4o"))
        finally:
            await executor.aclose()

    return asyncio.run(go())


def completion(**usage: Any) -> dict[str, Any]:
    return {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}], "usage": usage}


# --- provider bodies -------------------------------------------------------------------------------


@probe("secrets")
@pytest.mark.parametrize("prefix", ["", "x" * 40, "Error: "])
def test_a_2xx_non_json_body_echoing_the_key_is_masked(prefix: str) -> None:
    body = f"{prefix}invalid key {KEY}; Authorization: Bearer {KEY}".encode()
    with pytest.raises(TransientError) as caught:
        call_openai(lambda request: httpx.Response(200, content=body))
    message = str(caught.value)
    assert "not JSON" in message
    # Not the key, and not a prefix of it long enough to matter.
    assert KEY[:12] not in message


@probe("numeric fields")
@pytest.mark.parametrize("tokens", [10**400, -5, -1])
def test_an_absurd_token_count_from_a_provider_is_an_execution_error(tokens: int) -> None:
    text = json.dumps(completion(prompt_tokens=tokens, completion_tokens=3))
    with pytest.raises(ExecutionError, match="invalid token count") as caught:
        call_openai(
            lambda request: httpx.Response(
                200, content=text.encode(), headers={"content-type": "application/json"}
            )
        )
    assert len(str(caught.value)) < 200  # a short message, not a 400-digit number


@probe("size cap")
def test_a_provider_body_over_the_cap_is_refused() -> None:
    big = b'{"pad": "' + b"a" * (MAX_RESPONSE_BYTES + 1) + b'"}'
    with pytest.raises(ExecutionError, match="larger than"):
        call_openai(lambda request: httpx.Response(200, content=big))


@probe("numeric fields")
@pytest.mark.parametrize(
    "payload",
    [
        {"output": "x", "inputTokens": 10**401},
        {"output": "x", "costUSD": -1.0},
        {"output": "x", "outputTokens": -3},
        {"output": "x", "numTurns": -1},
    ],
)
def test_absurd_numbers_from_a_command_are_an_execution_error(payload: dict[str, Any]) -> None:
    # The command protocol's own check speaks first (execute/protocol.py); either way it is one
    # short line, never a traceback or a 400-digit echo.
    with pytest.raises(ExecutionError, match=r"invalid|must be a non-negative") as raised:
        parse_result(payload, source="the executor command")
    assert len(str(raised.value)) < 200


# --- pages -------------------------------------------------------------------------------------------


def _hostile(size: int) -> str:
    unit = "<a " + "<" * 64 + "<script>" + "<!--" + "&" * 16 + "<div x='"
    return (unit * (size // len(unit) + 1))[:size]


def _best_of(runs: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


@probe("hostile page")
def test_html_to_text_grows_linearly_on_a_hostile_page() -> None:
    # Measured against itself in the same run: 16x the input may cost about 16x, never 256x (the
    # quadratic regexes did). The bound leaves room for noise without admitting quadratic growth.
    small, large = _hostile(8 * 1024), _hostile(128 * 1024)
    ratio = _best_of(5, lambda: html_to_text(large)) / max(_best_of(5, lambda: html_to_text(small)), 1e-4)
    assert ratio < 80, ratio


@probe("hostile page")
def test_a_1_mib_hostile_page_is_fetched_and_converted_within_its_timeout() -> None:
    page = _hostile(1_048_576 - 64).encode()
    with DocServer() as server:
        server.pages["/hostile"] = Page(page, headers={"Content-Type": "text/html"})
        fetcher = SafeHttpFetcher(allow_hosts={LOOP}, dns=StubDns({LOOP: ["127.0.0.1"]}), timeout=30.0)

        async def go() -> tuple[str, int]:
            # The loop keeps turning while the page is converted (the conversion runs in a thread).
            ticks = 0
            task = asyncio.ensure_future(fetcher.fetch(f"http://{LOOP}:{server.port}/hostile"))
            while not task.done():
                await asyncio.sleep(0.005)
                ticks += 1
            await fetcher.aclose()
            return task.result(), ticks

        text, ticks = asyncio.run(go())
    assert isinstance(text, str) and ticks > 1


# --- addresses ---------------------------------------------------------------------------------------


@probe("blocked address")
@pytest.mark.parametrize(
    "address",
    [
        "fec0::1",
        "feff::1",
        "::ffff:0:7f00:1",
        "::ffff:0:a00:1",
        "::ffff:0:0:1",
        "64:ff9b::a9fe:a9fe",
        "64:ff9b:1::1",
        "100::1",
        "3ffe::1",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "::7f00:1",
    ],
)
def test_every_ipv6_special_range_is_blocked(address: str) -> None:
    assert blocked_range(ipaddress.ip_address(address)) is not None
