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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import httpx

from pytest_omk.agent.tools import ToolSpec
from pytest_omk.errors import ConfigError
from pytest_omk.execute import anthropic as anthropic_api
from pytest_omk.execute import openai as openai_api
from pytest_omk.execute.base import Endpoint
from pytest_omk.execute.http_client import ApiEndpoint, JsonApiClient, json_str
from pytest_omk.execute.pricing import PriceBook

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

    @property
    def api_endpoint(self) -> Endpoint | None:
        """Where calls go (its URL is part of the recording key); ``None`` for a provider without one."""
        ...

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


class _HttpProvider:
    """Construction and closing shared by the providers: one client for the API's endpoint."""

    @staticmethod
    def _endpoint(env: Mapping[str, str] | None) -> ApiEndpoint:
        raise NotImplementedError

    def __init__(
        self,
        timeout: float,
        *,
        env: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        prices: PriceBook | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self._http = JsonApiClient(self._endpoint(env), timeout=timeout, transport=transport)
        self._prices = prices or PriceBook()
        self._max_tokens = max_tokens
        """``--omk-max-tokens``: the most tokens of each of the agent's answers."""

    @property
    def api_endpoint(self) -> ApiEndpoint:
        """Where calls go: its URL is part of the recording key."""
        return self._http.endpoint

    async def aclose(self) -> None:
        await self._http.aclose()


class OpenAIProvider(_HttpProvider):
    """Chat completions with function tools (see the module docstring)."""

    api: Api = "openai"
    default_model = openai_api.DEFAULT_MODEL

    # As the plain openai executor: only api.openai.com insists on a key, and only live calls need it.
    _endpoint = staticmethod(openai_api.endpoint)

    def start(self, system: str | None, prompt: str) -> Messages:
        """The system prompt (as the first message) and the user's prompt."""
        messages: Messages = [{"role": "system", "content": system}] if system else []
        return [*messages, {"role": "user", "content": prompt}]

    async def complete(
        self, messages: Messages, tools: Sequence[ToolSpec], model: str, system: str | None
    ) -> ModelTurn:
        """One chat completion with the tools offered."""
        # The system prompt is already the first message (see start()).
        body: dict[str, Any] = {"model": model, "messages": messages}
        if self._max_tokens is not None:
            body[openai_api.max_tokens_field(self._http.endpoint.url)] = self._max_tokens
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.schema},
                }
                for t in tools
            ]
        data, elapsed = await self._http.post(body)
        message, finish = openai_api.first_choice(data)
        content = message.get("content")
        calls = [self._call(raw) for raw in message.get("tool_calls") or [] if isinstance(raw, dict)]
        history: dict[str, Any] = {
            "role": "assistant",
            "content": content if isinstance(content, str) else None,
        }
        if calls:
            history["tool_calls"] = [raw for raw in message["tool_calls"] if isinstance(raw, dict)]
        usage = openai_api.usage(data, model, self._prices, self._http.endpoint.url)
        return ModelTurn(
            text=content if isinstance(content, str) else "",
            calls=calls,
            message=history,
            stop_reason=finish,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost=usage.cost,
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
        """One ``tool`` message per reply."""
        for reply in replies:
            messages.append({"role": "tool", "tool_call_id": reply.call.id, "content": reply.output})


class AnthropicProvider(_HttpProvider):
    """The Messages API with tools (see the module docstring)."""

    api: Api = "anthropic"
    default_model = anthropic_api.DEFAULT_MODEL

    _endpoint = staticmethod(anthropic_api.endpoint)

    def start(self, system: str | None, prompt: str) -> Messages:
        """The user's prompt (the system prompt goes in its own field)."""
        return [{"role": "user", "content": prompt}]

    async def complete(
        self, messages: Messages, tools: Sequence[ToolSpec], model: str, system: str | None
    ) -> ModelTurn:
        """One Messages API answer with the tools offered."""
        limit = anthropic_api.MAX_TOKENS if self._max_tokens is None else self._max_tokens
        body: dict[str, Any] = {"model": model, "max_tokens": limit, "messages": messages}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.schema} for t in tools
            ]
        data, elapsed = await self._http.post(body)
        blocks = anthropic_api.content_blocks(data)
        calls = [
            CallRequest(
                str(b.get("id") or ""),
                str(b.get("name") or ""),
                b.get("input") if b.get("input") is not None else {},
            )
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        usage = anthropic_api.usage(data, model, self._prices, self._http.endpoint.url)
        return ModelTurn(
            text=anthropic_api.text_of(blocks),
            calls=calls,
            message={"role": "assistant", "content": blocks},
            stop_reason=json_str(data.get("stop_reason")),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost=usage.cost,
            elapsed_ms=elapsed,
        )

    def add_results(self, messages: Messages, replies: Sequence[ToolReply]) -> None:
        """One user message holding a ``tool_result`` block per reply."""
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


def make_provider(
    api: str,
    timeout: float,
    *,
    env: Mapping[str, str] | None = None,
    prices: PriceBook | None = None,
    max_tokens: int | None = None,
) -> Provider:
    """The provider for ``api`` (``openai`` or ``anthropic``)."""
    if api == "openai":
        return OpenAIProvider(timeout, env=env, prices=prices, max_tokens=max_tokens)
    if api == "anthropic":
        return AnthropicProvider(timeout, env=env, prices=prices, max_tokens=max_tokens)
    raise ConfigError(f"--omk-agent-api must be one of {', '.join(AGENT_APIS)}, got {api!r}")
