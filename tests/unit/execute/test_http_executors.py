"""The ``openai`` and ``anthropic`` executors against the loopback fake server (real httpx)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from pytest_omk.errors import ConfigError, ExecutionError
from pytest_omk.execute.anthropic import AnthropicExecutor, messages_url
from pytest_omk.execute.base import Executor, TransientError
from pytest_omk.execute.http_errors import parse_retry_after, redact
from pytest_omk.execute.openai import OpenAIExecutor, chat_completions_url
from pytest_omk.execute.pricing import PriceBook, cost_usd, lookup_price, parse_prices
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from tests.fakes.fake_llm import FakeLLM

KEY = "sk-test-0123456789abcdef"


def run(executor: Executor, prompt: str = "hello", **fields: Any) -> ExecutionResult:
    """One call on a fresh loop, closing the executor afterwards."""

    async def go() -> ExecutionResult:
        try:
            return await executor.execute(ExecutionRequest(prompt=prompt, **fields))
        finally:
            await executor.aclose()

    return asyncio.run(go())


def mock(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.MockTransport:
    return httpx.MockTransport(handler)


# -- openai ------------------------------------------------------------------------------------


def test_openai_success_reports_output_tokens_cost_and_latency(fake_llm: FakeLLM) -> None:
    fake_llm.add_rule("capital of France", {"text": "Paris", "usage": [1000, 500]})
    result = run(OpenAIExecutor(10, base_url=fake_llm.openai_base_url, api_key=KEY), "capital of France?")
    assert result.output == "Paris"
    assert (result.inputTokens, result.outputTokens) == (1000, 500)
    # A loopback server is not OpenAI: its tokens are not billed at OpenAI's list price.
    assert result.costUSD is None
    assert result.endpoint == fake_llm.openai_base_url + "/chat/completions"
    assert result.servedModel == "gpt-4o-mini"
    assert result.numTurns == 1
    assert result.stopReason == "stop"
    assert result.latencyMs is not None and result.latencyMs > 0
    [request] = fake_llm.requests
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "gpt-4o-mini"
    assert "response_format" not in request.body


def test_openai_unknown_model_has_tokens_but_no_cost(fake_llm: FakeLLM) -> None:
    fake_llm.script(default={"text": "hi", "usage": [10, 2]})
    result = run(OpenAIExecutor(10, base_url=fake_llm.base_url), model="llama3.1:8b")
    assert (result.inputTokens, result.outputTokens) == (10, 2)
    assert result.costUSD is None


def _openai_answer(usage: dict[str, Any], model: str | None = None) -> httpx.MockTransport:
    choice = {"message": {"content": "ok"}, "finish_reason": "stop"}
    served = {} if model is None else {"model": model}
    return mock(lambda request: httpx.Response(200, json={"choices": [choice], "usage": usage, **served}))


def test_openai_prices_by_served_snapshot_when_alias_is_unknown() -> None:
    transport = _openai_answer({"prompt_tokens": 1_000_000, "completion_tokens": 0}, "gpt-4o-2024-08-06")
    executor = OpenAIExecutor(10, base_url="https://api.openai.com", api_key=KEY, transport=transport)
    assert run(executor, model="my-deployment").costUSD == pytest.approx(2.50)


def test_the_list_price_applies_at_openais_own_endpoint_only_and_ini_prices_anywhere() -> None:
    usage = {"prompt_tokens": 1_000_000, "completion_tokens": 1_000_000}
    own = OpenAIExecutor(5, base_url="https://api.openai.com", api_key=KEY, transport=_openai_answer(usage))
    proxy = OpenAIExecutor(5, base_url="https://proxy.example.com", transport=_openai_answer(usage))
    priced = OpenAIExecutor(
        5,
        base_url="https://proxy.example.com",
        transport=_openai_answer(usage),
        prices=PriceBook(parse_prices(["gpt-4o-mini = 1 2"])),
    )
    assert run(own).costUSD == pytest.approx(0.15 + 0.60)
    assert run(proxy).costUSD is None
    assert run(priced).costUSD == pytest.approx(3.0)


def test_openai_cached_prompt_tokens_are_billed_at_the_cache_rate() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        usage = {
            "prompt_tokens": 1_000_000,
            "completion_tokens": 0,
            "prompt_tokens_details": {"cached_tokens": 400_000},
        }
        choice = {"message": {"content": "ok"}, "finish_reason": "stop"}
        return httpx.Response(200, json={"choices": [choice], "usage": usage})

    executor = OpenAIExecutor(5, base_url="https://api.openai.com", api_key=KEY, transport=mock(handler))
    result = run(executor, model="gpt-4o")
    assert result.inputTokens == 1_000_000
    assert result.costUSD == pytest.approx(0.6 * 2.50 + 0.4 * 1.25)


def test_openai_system_prompt_comes_first_and_json_mode_sets_response_format(fake_llm: FakeLLM) -> None:
    executor = OpenAIExecutor(10, base_url=fake_llm.openai_base_url, api_key=KEY)
    run(executor, "rate this", system="You are a judge", model="gpt-4o", json_mode=True)
    run(OpenAIExecutor(10, base_url=fake_llm.openai_base_url), "plain")
    with_system, without = (r.body for r in fake_llm.requests)
    assert with_system["messages"] == [
        {"role": "system", "content": "You are a judge"},
        {"role": "user", "content": "rate this"},
    ]
    assert with_system["response_format"] == {"type": "json_object"}
    assert with_system["model"] == "gpt-4o"
    assert without["messages"] == [{"role": "user", "content": "plain"}]


def test_openai_tool_call_reply_without_content_gives_empty_output(fake_llm: FakeLLM) -> None:
    fake_llm.script(default={"tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]})
    result = run(OpenAIExecutor(10, base_url=fake_llm.base_url))
    assert result.output == ""
    assert result.stopReason == "tool_calls"


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_openai_base_url_with_or_without_v1(fake_llm: FakeLLM, suffix: str) -> None:
    result = run(OpenAIExecutor(10, base_url=fake_llm.base_url + suffix))
    assert result.output == "fake reply"
    assert [r.path for r in fake_llm.requests] == ["/v1/chat/completions"]


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://localhost:11434", "http://localhost:11434/v1/chat/completions"),  # Ollama
        ("http://localhost:8000/v1", "http://localhost:8000/v1/chat/completions"),  # vLLM, llama.cpp
        ("http://127.0.0.1:1234/v1/", "http://127.0.0.1:1234/v1/chat/completions"),  # LM Studio
        ("https://gateway.example/openai/v1", "https://gateway.example/openai/v1/chat/completions"),
    ],
)
def test_chat_completions_url(base: str, url: str) -> None:
    assert chat_completions_url(base) == url


def test_openai_reads_environment(fake_llm_env: FakeLLM) -> None:
    result = run(OpenAIExecutor(10))
    assert result.output == "fake reply"
    assert fake_llm_env.requests[0].headers["authorization"] == "Bearer sk-fake-openai-key-for-tests"


def test_openai_key_required_only_for_api_openai_com(fake_llm: FakeLLM) -> None:
    # Building the executor never needs a key (a replay-only run has none); a live call does.
    with pytest.raises(ConfigError, match=r"^OPENAI_API_KEY environment variable is not set$"):
        run(OpenAIExecutor(10, env={}))
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        run(OpenAIExecutor(10, env={"OPENAI_BASE_URL": "https://api.openai.com/v1"}))
    run(OpenAIExecutor(10, env={"OPENAI_BASE_URL": fake_llm.openai_base_url}))
    assert "authorization" not in fake_llm.requests[0].headers


@pytest.mark.parametrize("base", ["ftp://host/v1", "not a url", "http://"])
def test_bad_base_url_is_a_config_error(base: str) -> None:
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        OpenAIExecutor(10, base_url=base)


def test_openai_4xx_is_not_retryable_and_never_shows_the_key(fake_llm: FakeLLM) -> None:
    fake_llm.inject("status", every=True, status=401, message=f"Incorrect API key provided: {KEY}.")
    executor = OpenAIExecutor(10, base_url=fake_llm.base_url, api_key=KEY)
    with pytest.raises(ExecutionError) as info:
        run(executor)
    assert not isinstance(info.value, TransientError)
    message = str(info.value)
    assert message.startswith("openai API error 401: Incorrect API key provided")
    assert KEY not in message and "Bearer" not in message and "sk-test" not in message
    assert KEY not in repr(executor)


def test_4xx_without_a_readable_message_names_the_status() -> None:
    transport = mock(lambda request: httpx.Response(404, text="<html>nope</html>"))
    with pytest.raises(ExecutionError, match=r"^openai API error 404$"):
        run(OpenAIExecutor(5, base_url="http://fake.invalid", transport=transport))


def test_429_is_transient_with_retry_after(fake_llm: FakeLLM) -> None:
    fake_llm.inject("rate_limit", first=1, retry_after="7")
    with pytest.raises(TransientError) as info:
        run(OpenAIExecutor(10, base_url=fake_llm.base_url))
    assert info.value.rate_limited and info.value.retry_after == 7
    assert "429" in str(info.value)


@pytest.mark.parametrize("kind", ["server_error", "unavailable", "garbage", "drop", "hang"])
def test_server_side_failures_are_transient(fake_llm: FakeLLM, kind: str) -> None:
    fake_llm.inject(kind, first=1, seconds=2.0)
    with pytest.raises(TransientError) as info:
        run(OpenAIExecutor(0.3, base_url=fake_llm.base_url, api_key=KEY))
    assert not info.value.rate_limited
    assert info.value.timed_out == (kind == "hang")  # a timeout is congestion; a 5xx is not
    assert KEY not in str(info.value)


def test_connection_refused_is_transient_and_asks_whether_the_server_runs() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(TransientError) as info:
        run(OpenAIExecutor(5, base_url=f"http://127.0.0.1:{port}"))
    assert str(info.value) == (
        f"openai API: cannot connect to http://127.0.0.1:{port}/v1/chat/completions: is the server running?"
    )
    assert not info.value.congestion


def test_a_connection_error_other_than_a_refusal_keeps_its_own_words() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")

    with pytest.raises(
        TransientError, match=r"connection to https://fake\.invalid/v1/chat/completions failed: \[SSL"
    ):
        run(OpenAIExecutor(5, base_url="https://fake.invalid", transport=mock(handler)))


@pytest.mark.parametrize(
    "body",
    [{"choices": []}, {"choices": [{"text": "x"}]}, [1, 2], {"choices": [{"message": {"content": 3}}]}],
)
def test_unexpected_2xx_shape_is_a_malformed_response(body: Any) -> None:
    transport = mock(lambda request: httpx.Response(200, json=body))
    with pytest.raises(TransientError, match="malformed response"):
        run(OpenAIExecutor(5, base_url="http://fake.invalid", transport=transport))


def test_one_client_per_loop_is_reused_and_a_new_loop_gets_a_new_one(fake_llm: FakeLLM) -> None:
    executor = OpenAIExecutor(10, base_url=fake_llm.base_url)

    async def twice() -> tuple[list[int], list[int]]:
        await executor.execute(ExecutionRequest(prompt="a"))
        first = executor._http.clients.clients
        await executor.execute(ExecutionRequest(prompt="b"))
        return [id(c) for c in first], [id(c) for c in executor._http.clients.clients]

    first, second = asyncio.run(twice())
    assert first == second and len(first) == 1
    assert run(executor, "c").output == "fake reply"  # a second asyncio.run, a fresh loop
    assert len(fake_llm.requests) == 3


@pytest.mark.parametrize("in_flight", [8, 32, 120])
def test_connections_are_kept_alive_for_every_call_in_flight(fake_llm: FakeLLM, in_flight: int) -> None:
    # httpx keeps 20 idle connections by default, and httpcore closes an idle one whenever the pool
    # holds more than that many connections in all: with more calls in flight than 20, nearly every
    # call opened a new connection (a TLS handshake each, against a real provider). Beyond 100 in
    # flight, httpx's default cap queued the surplus inside the client, below the run's concurrency.
    executor = OpenAIExecutor(10, base_url=fake_llm.base_url)
    fake_llm.gate(in_flight, timeout=5)  # the first wave is in flight at once, or the gate times out
    peaks = []

    async def waves() -> None:
        try:
            for wave in range(3):
                await asyncio.gather(
                    *(executor.execute(ExecutionRequest(prompt=f"{wave}-{i}")) for i in range(in_flight))
                )
                peaks.append(fake_llm.peak_in_flight)
                fake_llm.reset()  # the next waves run ungated
        finally:
            await executor.aclose()

    asyncio.run(waves())
    assert peaks[0] == in_flight
    assert fake_llm.connections == in_flight  # the first wave's connections served the next two


def test_executors_satisfy_the_protocol(fake_llm: FakeLLM) -> None:
    openai = OpenAIExecutor(10, base_url=fake_llm.base_url)
    anthropic = AnthropicExecutor(10, base_url=fake_llm.base_url, api_key=KEY)
    assert isinstance(openai, Executor) and isinstance(anthropic, Executor)
    assert (openai.id, anthropic.id) == ("openai", "anthropic")
    assert not openai.supports_mocks and not anthropic.supports_mocks


# -- anthropic ---------------------------------------------------------------------------------


def test_anthropic_success(fake_llm: FakeLLM) -> None:
    fake_llm.add_rule("capital", {"text": "Paris", "usage": [1000, 100]}, system="be brief")
    result = run(
        AnthropicExecutor(10, base_url=fake_llm.base_url, api_key=KEY), "capital?", system="be brief"
    )
    assert result.output == "Paris"
    assert (result.inputTokens, result.outputTokens) == (1000, 100)
    assert result.costUSD is None  # a loopback server is not Anthropic
    assert result.endpoint == fake_llm.base_url + "/v1/messages"
    assert (result.numTurns, result.stopReason) == (1, "end_turn")
    [request] = fake_llm.requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8192,
        "messages": [{"role": "user", "content": "capital?"}],
        "system": "be brief",
    }


def test_anthropic_without_system_and_unknown_model(fake_llm: FakeLLM) -> None:
    result = run(AnthropicExecutor(10, base_url=fake_llm.base_url + "/v1/", api_key=KEY), model="local-model")
    assert result.costUSD is None and result.inputTokens is not None
    assert "system" not in fake_llm.requests[0].body
    assert fake_llm.requests[0].path == "/v1/messages"


def test_anthropic_concatenates_text_blocks_and_bills_cache_tokens() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        content = [
            {"type": "text", "text": "Hello, "},
            {"type": "tool_use", "id": "t1", "name": "x", "input": {}},
            {"type": "text", "text": "world"},
        ]
        usage = {
            "input_tokens": 100_000,
            "output_tokens": 0,
            "cache_read_input_tokens": 1_000_000,
            "cache_creation_input_tokens": 200_000,
        }
        return httpx.Response(200, json={"content": content, "usage": usage, "stop_reason": "end_turn"})

    executor = AnthropicExecutor(
        5, base_url="https://api.anthropic.com", api_key=KEY, transport=mock(handler)
    )
    result = run(executor, model="claude-sonnet-4-5-20250929")
    assert result.output == "Hello, world"
    assert result.inputTokens == 1_300_000
    assert result.costUSD == pytest.approx(0.1 * 3 + 1.0 * 0.3 + 0.2 * 3.75)


def test_anthropic_missing_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^ANTHROPIC_API_KEY environment variable is not set$"):
        run(AnthropicExecutor(10, env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}))


def test_anthropic_reads_environment_and_maps_errors(fake_llm_env: FakeLLM) -> None:
    fake_llm_env.inject("status", first=1, status=400, message="max_tokens: too large")
    with pytest.raises(ExecutionError, match=r"^anthropic API error 400: max_tokens: too large$"):
        run(AnthropicExecutor(10))
    assert run(AnthropicExecutor(10)).output == "fake reply"
    assert fake_llm_env.requests[1].headers["x-api-key"] == "sk-ant-fake-anthropic-key-for-tests"


def test_anthropic_overloaded_529_is_transient() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    transport = mock(lambda request: httpx.Response(529, json=body))
    with pytest.raises(TransientError, match="anthropic API error 529: Overloaded"):
        run(AnthropicExecutor(5, base_url="http://fake.invalid", api_key=KEY, transport=transport))


def test_messages_url() -> None:
    assert messages_url("https://api.anthropic.com") == "https://api.anthropic.com/v1/messages"
    assert messages_url("http://proxy:8080/anthropic/v1/") == "http://proxy:8080/anthropic/v1/messages"


# -- shared pieces -----------------------------------------------------------------------------


def test_price_lookup_exact_then_snapshot_suffix() -> None:
    assert lookup_price("gpt-4o-2024-08-06") == lookup_price("gpt-4o")
    assert lookup_price("gpt-4o-mini-2024-07-18") == lookup_price("gpt-4o-mini") != lookup_price("gpt-4o")
    assert lookup_price("claude-3-5-haiku-20241022") == lookup_price("claude-3-5-haiku")
    assert lookup_price("claude-3-7-sonnet-latest") == lookup_price("claude-3-7-sonnet")
    assert lookup_price("GPT-4O") == lookup_price("gpt-4o")
    for unknown in ("gpt-4o-turbo-ultra", "llama3", "", None):
        assert lookup_price(unknown) is None
    assert cost_usd("llama3", 10, 10) is None
    assert cost_usd("gpt-4o", 0, 0) == 0.0


def test_retry_after_forms() -> None:
    assert parse_retry_after(httpx.Headers({"retry-after": "3"})) == 3.0
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    now = datetime(2026, 1, 1, tzinfo=UTC)
    date = format_datetime(now + timedelta(seconds=20), usegmt=True)
    assert parse_retry_after(httpx.Headers({"retry-after": date}), now=now) == 20.0
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers()) is None


def test_http_date_retry_after_from_the_server(fake_llm: FakeLLM) -> None:
    date = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    fake_llm.inject("rate_limit", first=1, retry_after=date)
    with pytest.raises(TransientError) as info:
        run(OpenAIExecutor(10, base_url=fake_llm.base_url))
    assert info.value.retry_after is not None and 25 <= info.value.retry_after <= 30


def test_redact_masks_known_and_key_shaped_secrets() -> None:
    text = redact(f"key {KEY} and sk-ant-api03-abc***xyz and my-token", ["my-token"])
    assert text == "key *** and *** and ***"
    assert json.dumps(text)  # stays printable


# -- warm-up -------------------------------------------------------------------------------------


def test_warmed_executors_share_one_tls_context_and_reuse_their_client(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One CA bundle load for the whole run; the clients exist before the first call."""
    import ssl

    from pytest_omk.execute.tls import SharedTls
    from pytest_omk.run.loop import preload_transport, share_tls, warm_clients

    built: list[ssl.SSLContext] = []
    original = ssl.create_default_context

    def counting(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        built.append(original(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(ssl, "create_default_context", counting)
    executors = [
        OpenAIExecutor(10, base_url=fake_llm.openai_base_url, api_key=KEY),
        AnthropicExecutor(10, base_url=fake_llm.base_url, api_key=KEY),
    ]
    tls = SharedTls()

    async def go() -> list[bool]:
        await preload_transport(tls)
        await warm_clients(share_tls(list(executors), tls))
        clients = [e._http.clients.clients for e in executors]
        assert all(len(c) == 1 for c in clients)
        for executor in executors:
            await executor.execute(ExecutionRequest(prompt="hello"))
        reused = [e._http.clients.clients == c for e, c in zip(executors, clients, strict=True)]
        for executor in executors:
            await executor.aclose()
        return reused

    assert asyncio.run(go()) == [True, True]
    assert len(built) == 1 and tls.builds == 1


def test_a_client_built_before_the_warm_up_builds_the_shared_context_itself(fake_llm: FakeLLM) -> None:
    """Whichever comes first, the warm-up or a call, the context is built once and shared."""
    from pytest_omk.execute.tls import SharedTls
    from pytest_omk.run.loop import preload_transport, share_tls

    executor = OpenAIExecutor(10, base_url=fake_llm.openai_base_url, api_key=KEY)
    tls = SharedTls()

    async def go() -> None:
        share_tls([executor], tls)
        await executor.execute(ExecutionRequest(prompt="hello"))  # before any warm-up
        assert tls.builds == 1
        await preload_transport(tls)
        await executor.aclose()

    asyncio.run(go())
    assert tls.builds == 1
