"""The fake model server itself: routing, scripting, faults, recording, the standalone process."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.fakes.fake_llm import FakeLLM, FakeLLMProcess, main
from tests.fakes.llm_script import Fault, Reply, ToolCallSpec, to_answer, to_rule

Post = Callable[..., httpx.Response]


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    """One client for the test (a fresh ``httpx.post`` costs tens of milliseconds)."""
    with httpx.Client(timeout=5) as http:
        yield http


@pytest.fixture
def post(fake_llm: FakeLLM, client: httpx.Client) -> Post:
    """POST a chat request in either API's shape: ``post(user, system=None, api="openai")``."""

    def send(
        user: str = "hi", system: str | None = None, api: str = "openai", timeout: float = 5
    ) -> httpx.Response:
        body: dict[str, Any]
        if api == "openai":
            messages = ([{"role": "system", "content": system}] if system else []) + [
                {"role": "user", "content": user}
            ]
            path, body = "/v1/chat/completions", {"model": "m", "messages": messages}
        else:
            path = "/v1/messages"
            body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": user}]}
            if system:
                body["system"] = system
        return client.post(fake_llm.base_url + path, json=body, headers={"x-test": "1"}, timeout=timeout)

    return send


def text(response: httpx.Response) -> str:
    body = response.json()
    if "choices" in body:
        return str(body["choices"][0]["message"]["content"])
    return "".join(block["text"] for block in body["content"] if block["type"] == "text")


def test_openai_shape_with_usage(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.add_rule("weather", "Sunny today")
    body = post("what is the weather?", system="short answers").json()
    assert body["object"] == "chat.completion" and body["model"] == "m"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "Sunny today"}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 6, "completion_tokens": 2, "total_tokens": 8}


def test_anthropic_shape_with_usage(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.add_rule("weather", {"text": "Sunny", "usage": [11, 3]})
    body = post("weather?", api="anthropic").json()
    assert body["type"] == "message" and body["stop_reason"] == "end_turn"
    assert body["content"] == [{"type": "text", "text": "Sunny"}]
    assert body["usage"] == {"input_tokens": 11, "output_tokens": 3}


def test_rules_match_user_system_and_api(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.add_rule("ping", "pong (judge)", system="judge")
    fake_llm.add_rule("ping", "pong (anthropic)", api="anthropic")
    fake_llm.add_rule("ping", "pong")
    fake_llm.add_rule(predicate=lambda r: r.body["model"] == "m" and "magic" in r.user, reply="predicate")
    assert text(post("ping", system="You are a judge")) == "pong (judge)"
    assert text(post("ping", api="anthropic")) == "pong (anthropic)"
    assert text(post("ping")) == "pong"
    assert text(post("magic word")) == "predicate"
    assert text(post("unmatched")) == "fake reply"


def test_match_uses_the_last_user_message(fake_llm: FakeLLM) -> None:
    fake_llm.add_rule("second", "matched the last one")
    messages = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "x"},
        {"role": "user", "content": [{"type": "text", "text": "second"}]},
    ]
    response = httpx.post(fake_llm.openai_base_url + "/chat/completions", json={"messages": messages})
    assert text(response) == "matched the last one"


def test_replies_are_consumed_in_order_and_the_last_repeats(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.add_rule("q", replies=[{"fault": "server_error"}, "first", "second"])
    assert post("q").status_code == 500
    assert [text(post("q")) for _ in range(3)] == ["first", "second", "second"]


def test_default_reply_and_global_latency(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.script(default="nothing matched", latency=0.2)
    started = time.perf_counter()
    assert text(post("anything")) == "nothing matched"
    assert time.perf_counter() - started >= 0.2


def test_a_rule_latency_overrides_the_global_one(fake_llm: FakeLLM, post: Post) -> None:
    # Were the global minute applied, the client would give up first: no wall-clock bound needed.
    fake_llm.script(default="nothing matched", latency=60.0)
    fake_llm.add_rule("fast", "quick", latency=0.0)
    assert text(post("fast", timeout=10)) == "quick"


def test_tool_call_replies_in_both_shapes(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.add_rule(
        "weather", {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "c1"}]}
    )
    message = post("weather?").json()["choices"][0]
    assert message["finish_reason"] == "tool_calls"
    assert message["message"]["content"] is None
    assert message["message"]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    ]
    body = post("weather?", api="anthropic").json()
    assert body["stop_reason"] == "tool_use"
    assert body["content"] == [
        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Oslo"}}
    ]


def test_requests_are_recorded(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.inject("unavailable", first=1)
    post("hello", system="sys")
    post("hello", api="anthropic")
    first, second = fake_llm.requests
    assert (first.path, first.api, first.user, first.system, first.outcome) == (
        "/v1/chat/completions",
        "openai",
        "hello",
        "sys",
        "unavailable",
    )
    assert first.headers["x-test"] == "1" and first.body["model"] == "m"
    assert (second.path, second.outcome) == ("/v1/messages", "reply")


def test_unknown_path_is_404_and_recorded(fake_llm: FakeLLM) -> None:
    response = httpx.post(fake_llm.base_url + "/v1/v1/chat/completions", json={})
    assert response.status_code == 404
    assert "no route" in response.json()["error"]["message"]
    assert fake_llm.requests[0].outcome == "not_found"


def test_fault_first_n_then_every(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.inject("rate_limit", first=2, retry_after=3)
    statuses = [post().status_code for _ in range(3)]
    assert statuses == [429, 429, 200]
    fake_llm.inject("status", every=True, status=403, message="forbidden")
    response = post(api="anthropic")
    assert response.status_code == 403
    assert response.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "forbidden"},
    }


def test_rate_limit_sends_retry_after(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.inject("rate_limit", first=1, retry_after="Wed, 21 Oct 2015 07:28:00 GMT")
    response = post()
    assert response.headers["retry-after"] == "Wed, 21 Oct 2015 07:28:00 GMT"
    assert response.json()["error"]["type"] == "rate_limit_error"


def test_probability_faults_are_seeded(fake_llm: FakeLLM, post: Post) -> None:
    def pattern(seed: int) -> list[int]:
        fake_llm.script(faults=[{"kind": "server_error", "probability": 0.5, "seed": seed}])
        return [post().status_code for _ in range(20)]

    first = pattern(3)
    assert first == pattern(3)
    assert {500, 200} == set(first)
    assert first != pattern(4)


def test_fault_limited_to_matching_prompts(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.inject("server_error", every=True, match="flaky")
    assert post("flaky one").status_code == 500
    assert post("steady one").status_code == 200


@pytest.mark.parametrize("kind", ["garbage", "drop"])
def test_broken_bodies(fake_llm: FakeLLM, post: Post, kind: str) -> None:
    fake_llm.inject(kind, first=1)
    if kind == "garbage":
        response = post()
        assert response.status_code == 200
        with pytest.raises(json.JSONDecodeError):
            response.json()
    else:
        with pytest.raises(httpx.RemoteProtocolError):
            post()
    assert post().status_code == 200


def test_slow_body_delivers_the_scripted_reply_slowly(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.add_rule("slow", "the right answer")
    fake_llm.inject("slow_body", first=1, seconds=0.01)
    started = time.perf_counter()
    assert text(post("slow")) == "the right answer"
    assert time.perf_counter() - started > 0.05


def test_hang_outlasts_the_client_and_stop_releases_it(fake_llm: FakeLLM, post: Post) -> None:
    hang = 120.0
    fake_llm.inject("hang", first=1, seconds=hang)
    with pytest.raises(httpx.ReadTimeout):
        post(timeout=0.2)
    started = time.perf_counter()
    fake_llm.stop()
    # Order of events, not a budget: stop() returned long before the hang would have ended.
    assert time.perf_counter() - started < hang / 2


def test_script_from_json_and_bad_scripts(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.script(
        json.loads(
            json.dumps(
                {
                    "default": {"text": "dflt"},
                    "rules": [{"match": "a", "replies": ["x", {"fault": "rate_limit", "retry_after": 1}]}],
                    "faults": [{"fault": "unavailable", "first": 1, "match": "b"}],
                }
            )
        )
    )
    assert [text(post("a")), post("a").status_code, post("b").status_code, text(post("b"))] == [
        "x",
        429,
        503,
        "dflt",
    ]
    with pytest.raises(ValueError, match="unknown fault kind"):
        to_answer({"fault": "explode"})
    with pytest.raises(ValueError, match="needs a reply"):
        to_rule({"match": "x"})
    assert to_answer({"text": "t", "tool_calls": [{"name": "n"}], "usage": [1, 2]}) == Reply(
        text="t", tool_calls=(ToolCallSpec("n"),), usage=(1, 2)
    )
    assert to_answer(Fault("hang")) == Fault("hang")


def test_reset_forgets_script_and_requests(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.add_rule("x", "y")
    post("x")
    fake_llm.reset()
    assert fake_llm.requests == []
    assert text(post("x")) == "fake reply"


def test_session_server_is_shared(fake_llm_session: FakeLLM) -> None:
    fake_llm_session.reset()
    fake_llm_session.add_rule("s", "session")
    response = httpx.post(
        fake_llm_session.openai_base_url + "/chat/completions",
        json={"messages": [{"role": "user", "content": "s"}]},
    )
    assert text(response) == "session"
    fake_llm_session.reset()


def test_standalone_process(fake_llm_process: Callable[..., FakeLLMProcess]) -> None:
    server = fake_llm_process({"rules": [{"match": "hello", "reply": "from a process"}]})
    response = httpx.post(
        server.openai_base_url + "/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "hello"}]},
        headers={"authorization": "Bearer k"},
    )
    assert text(response) == "from a process"
    [recorded] = server.requests()
    assert recorded["path"] == "/v1/chat/completions" and recorded["headers"]["authorization"] == "Bearer k"


def test_main_rejects_unknown_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--bogus"])
    assert "usage" in capsys.readouterr().err


def test_reply_model_override(fake_llm: FakeLLM, post: Post) -> None:
    fake_llm.script(default={"text": "x", "model": "gpt-4o-2024-08-06"})
    body: dict[str, Any] = post().json()
    assert body["model"] == "gpt-4o-2024-08-06"
