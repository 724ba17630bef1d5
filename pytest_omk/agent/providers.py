"""The two tool-calling wire protocols the agent loop speaks, behind one small interface.

- ``openai``: chat completions with ``tools`` (``type: function``); the answer's
  ``message.tool_calls`` carry JSON-encoded arguments, and each result goes back as a
  ``role: tool`` message naming its ``tool_call_id``.
- ``anthropic``: the Messages API with ``tools`` (``input_schema``); the answer's ``tool_use``
  blocks carry the input as an object, and the results go back in one user message of
  ``tool_result`` blocks (``is_error`` on failures).

Each provider call goes through the shared :class:`~pytest_omk.execute.http_client.JsonApiClient`,
so a 429, a 5xx, a timeout or a dropped connection raises ``TransientError`` like every other
executor, and an API key never appears in a message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import httpx

from pytest_omk.agent.tools import ToolSpec
from pytest_omk.errors import ConfigError
from pytest_omk.execute import anthropic as anthropic_api
from pytest_omk.execute import openai as openai_api
from pytest_omk.execute.http_client import JsonApiClient
from pytest_omk.execute.http_errors import malformed
from pytest_omk.execute.pricing import cost_usd, priced_name

Api = Literal["openai", "anthropic"]
AGENT_APIS: tuple[Api, ...] = ("openai", "anthropic")
Messages = list[dict[str, Any]]


@dataclass(frozen=True)
class CallRequest:
    """One tool call the model asked for."""

    id: str
    name: str
    arguments: Any
    """The parsed arguments (an object), or the raw text when it was not valid JSON."""
    error: str | None = None
    """Why the arguments are unusable, when they are."""


@dataclass(frozen=True)
class ModelTurn:
    """One assistant answer: text, tool calls, usage and the raw message to append to the history."""

    text: str
    calls: list[CallRequest]
    message: dict[str, Any]
    stop_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    elapsed_ms: float = 0.0


@dataclass(frozen=True)
class ToolReply:
    """A tool result to send back for one call."""

    call: CallRequest
    output: str
    is_error: bool = False


class Provider(Protocol):
    """What the loop needs from an API."""

    api: Api
    default_model: str

    def start(self, system: str | None, prompt: str) -> Messages:
        """The opening messages of a conversation."""
        ...

    async def complete(
        self, messages: Messages, tools: Sequence[ToolSpec], model: str, system: str | None
    ) -> ModelTurn:
        """One assistant answer to ``messages`` (``system`` is sent where the API wants it)."""
        ...

    def add_results(self, messages: Messages, replies: Sequence[ToolReply]) -> None:
        """Append the tool results of the last answer."""
        ...

    async def aclose(self) -> None:
        """Close the HTTP client."""
        ...


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class _Http:
    client: JsonApiClient
    url: str
    headers: dict[str, str] = field(default_factory=dict)

    async def post(self, body: Mapping[str, Any]) -> tuple[dict[str, Any], float]:
        return await self.client.post(self.url, headers=self.headers, body=body)


class OpenAIProvider:
    """Chat completions with function tools (see the module docstring)."""

    api: Api = "openai"
    default_model = openai_api.DEFAULT_MODEL

    def __init__(
        self,
        timeout: float,
        *,
        env: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        environ = os.environ if env is None else env
        url = openai_api.chat_completions_url(environ.get("OPENAI_BASE_URL") or openai_api.DEFAULT_BASE_URL)
        key = environ.get("OPENAI_API_KEY") or None
        # As the plain openai executor: only api.openai.com insists on a key, and only live calls need it.
        self._key_missing = key is None and httpx.URL(url).host == "api.openai.com"
        headers = {"content-type": "application/json", "accept": "application/json"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        client = JsonApiClient(provider="openai", timeout=timeout, secrets=(key,), transport=transport)
        self._http = _Http(client, url, headers)

    def start(self, system: str | None, prompt: str) -> Messages:
        messages: Messages = [{"role": "system", "content": system}] if system else []
        return [*messages, {"role": "user", "content": prompt}]

    async def complete(
        self, messages: Messages, tools: Sequence[ToolSpec], model: str, system: str | None
    ) -> ModelTurn:
        # The system prompt is already the first message (see start()).
        if self._key_missing:
            raise ConfigError("OPENAI_API_KEY environment variable is not set")
        body: dict[str, Any] = {"model": model, "messages": messages}
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.schema},
                }
                for t in tools
            ]
        data, elapsed = await self._http.post(body)
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise malformed("openai", "no choices in the response")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise malformed("openai", "choices[0] has no message")
        content = message.get("content")
        calls = [self._call(raw) for raw in message.get("tool_calls") or [] if isinstance(raw, dict)]
        history: dict[str, Any] = {
            "role": "assistant",
            "content": content if isinstance(content, str) else None,
        }
        if calls:
            history["tool_calls"] = [raw for raw in message["tool_calls"] if isinstance(raw, dict)]
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        prompt_tokens, completion_tokens = (
            _int(usage.get("prompt_tokens")),
            _int(usage.get("completion_tokens")),
        )
        details = usage.get("prompt_tokens_details")
        cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else None
        cost = None
        if prompt_tokens is not None and completion_tokens is not None:
            cached = min(cached or 0, prompt_tokens)
            name = priced_name(model, data.get("model"))
            cost = cost_usd(name, prompt_tokens - cached, completion_tokens, cache_read_tokens=cached)
        finish = choices[0].get("finish_reason")
        return ModelTurn(
            text=content if isinstance(content, str) else "",
            calls=calls,
            message=history,
            stop_reason=finish if isinstance(finish, str) else None,
            input_tokens=prompt_tokens,
            output_tokens=completion_tokens,
            cost=cost,
            elapsed_ms=elapsed,
        )

    @staticmethod
    def _call(raw: dict[str, Any]) -> CallRequest:
        function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
        assert isinstance(function, dict)
        name = function.get("name") if isinstance(function.get("name"), str) else ""
        text = function.get("arguments")
        call_id = str(raw.get("id") or "")
        if not isinstance(text, str) or not text.strip():
            return CallRequest(call_id, str(name), {})
        try:
            arguments = json.loads(text)
        except ValueError as exc:
            return CallRequest(call_id, str(name), text, f"the arguments are not valid JSON ({exc})")
        return CallRequest(call_id, str(name), arguments)

    def add_results(self, messages: Messages, replies: Sequence[ToolReply]) -> None:
        for reply in replies:
            messages.append({"role": "tool", "tool_call_id": reply.call.id, "content": reply.output})

    async def aclose(self) -> None:
        await self._http.client.aclose()


class AnthropicProvider:
    """The Messages API with tools (see the module docstring)."""

    api: Api = "anthropic"
    default_model = anthropic_api.DEFAULT_MODEL

    def __init__(
        self,
        timeout: float,
        *,
        env: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        environ = os.environ if env is None else env
        url = anthropic_api.messages_url(environ.get("ANTHROPIC_BASE_URL") or anthropic_api.DEFAULT_BASE_URL)
        self._key = environ.get("ANTHROPIC_API_KEY") or ""
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "x-api-key": self._key,
            "anthropic-version": anthropic_api.API_VERSION,
        }
        client = JsonApiClient(
            provider="anthropic", timeout=timeout, secrets=(self._key,), transport=transport
        )
        self._http = _Http(client, url, headers)

    def start(self, system: str | None, prompt: str) -> Messages:
        return [{"role": "user", "content": prompt}]

    async def complete(
        self, messages: Messages, tools: Sequence[ToolSpec], model: str, system: str | None
    ) -> ModelTurn:
        if not self._key:
            raise ConfigError("ANTHROPIC_API_KEY environment variable is not set")
        body: dict[str, Any] = {"model": model, "max_tokens": anthropic_api.MAX_TOKENS, "messages": messages}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.schema} for t in tools
            ]
        data, elapsed = await self._http.post(body)
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise malformed("anthropic", "no content in the response")
        blocks = [b for b in blocks if isinstance(b, dict)]
        text = "".join(
            b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
        )
        calls = [
            CallRequest(
                str(b.get("id") or ""),
                str(b.get("name") or ""),
                b.get("input") if b.get("input") is not None else {},
            )
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        fresh, output_tokens = _int(usage.get("input_tokens")), _int(usage.get("output_tokens"))
        cache_read = _int(usage.get("cache_read_input_tokens")) or 0
        cache_write = _int(usage.get("cache_creation_input_tokens")) or 0
        cost = None
        if fresh is not None and output_tokens is not None:
            name = priced_name(model, data.get("model"))
            cost = cost_usd(
                name, fresh, output_tokens, cache_read_tokens=cache_read, cache_write_tokens=cache_write
            )
        stop = data.get("stop_reason")
        return ModelTurn(
            text=text,
            calls=calls,
            message={"role": "assistant", "content": blocks},
            stop_reason=stop if isinstance(stop, str) else None,
            input_tokens=None if fresh is None else fresh + cache_read + cache_write,
            output_tokens=output_tokens,
            cost=cost,
            elapsed_ms=elapsed,
        )

    def add_results(self, messages: Messages, replies: Sequence[ToolReply]) -> None:
        if replies:
            content = [
                # The API refuses an empty tool_result text; the trace keeps the real "".
                {
                    "type": "tool_result",
                    "tool_use_id": r.call.id,
                    "content": r.output or "(no output)",
                    "is_error": r.is_error,
                }
                for r in replies
            ]
            messages.append({"role": "user", "content": content})

    async def aclose(self) -> None:
        await self._http.client.aclose()


def make_provider(api: str, timeout: float, *, env: Mapping[str, str] | None = None) -> Provider:
    """The provider for ``api`` (``openai`` or ``anthropic``)."""
    if api == "openai":
        return OpenAIProvider(timeout, env=env)
    if api == "anthropic":
        return AnthropicProvider(timeout, env=env)
    raise ConfigError(f"--omk-agent-api must be one of {', '.join(AGENT_APIS)}, got {api!r}")
