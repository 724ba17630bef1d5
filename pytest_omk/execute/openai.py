"""The ``openai`` executor: OpenAI-compatible chat completions over HTTP.

Anything that speaks ``POST /v1/chat/completions`` works: OpenAI itself, and local servers such as
vLLM, Ollama, llama.cpp's ``llama-server`` and LM Studio. ``OPENAI_BASE_URL`` may be given with or
without the ``/v1`` suffix (``http://localhost:11434`` and ``http://localhost:8000/v1`` both work).
An API key is required only for api.openai.com; local servers usually need none.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import httpx

from pytest_omk.execute.api_executor import ApiExecutor, one_call_result
from pytest_omk.execute.http_client import (
    ApiEndpoint,
    Usage,
    http_base_url,
    json_int,
    json_str,
)
from pytest_omk.execute.http_errors import malformed
from pytest_omk.execute.pricing import cost_usd, priced_name
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
_KEY_REQUIRED_HOST = "api.openai.com"


def chat_completions_url(base_url: str) -> str:
    """``base_url`` + ``/v1`` (unless its path already ends in ``/v1``) + ``/chat/completions``."""
    url = http_base_url(base_url, "OPENAI_BASE_URL")
    path = url.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return str(url.copy_with(path=path + "/chat/completions"))


def endpoint(
    env: Mapping[str, str] | None = None, *, base_url: str | None = None, api_key: str | None = None
) -> ApiEndpoint:
    """The chat completions endpoint from ``base_url`` / ``api_key``, else ``OPENAI_BASE_URL`` /
    ``OPENAI_API_KEY`` in ``env`` (default ``os.environ``); only api.openai.com insists on a key."""
    environ = os.environ if env is None else env
    url = chat_completions_url(base_url or environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
    key = api_key or environ.get("OPENAI_API_KEY") or None
    headers = {"content-type": "application/json", "accept": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    key_missing = key is None and httpx.URL(url).host == _KEY_REQUIRED_HOST
    missing = "OPENAI_API_KEY environment variable is not set" if key_missing else None
    return ApiEndpoint("openai", url, headers, key, missing)


def first_choice(data: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The first choice's message and finish reason; a malformed-response error without them."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise malformed("openai", "no choices in the response")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise malformed("openai", "choices[0] has no message")
    return message, json_str(choices[0].get("finish_reason"))


def usage(data: Mapping[str, Any], model: str) -> Usage:
    """Prompt and completion tokens and their cost (cached prompt tokens at the cache-read rate)."""
    raw_usage = data.get("usage")
    counts: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    prompt_tokens = json_int(counts.get("prompt_tokens"))
    completion_tokens = json_int(counts.get("completion_tokens"))
    details = counts.get("prompt_tokens_details")
    cached = json_int(details.get("cached_tokens")) if isinstance(details, dict) else None
    cost = None
    if prompt_tokens is not None and completion_tokens is not None:
        # prompt_tokens includes the cached part, which is billed at the cache-read rate.
        cached = min(cached or 0, prompt_tokens)
        cost = cost_usd(
            priced_name(model, data.get("model")),
            prompt_tokens - cached,
            completion_tokens,
            cache_read_tokens=cached,
        )
    return Usage(prompt_tokens, completion_tokens, cost)


class OpenAIExecutor(ApiExecutor):
    """Sends the prompt (and system prompt) as one chat completion and reports what came back.

    Reads ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` from ``env`` (default ``os.environ``) unless
    given; a call to api.openai.com without a key raises ``ConfigError``.
    """

    id = "openai"
    endpoint = staticmethod(endpoint)

    @staticmethod
    def _body(request: ExecutionRequest, model: str) -> dict[str, Any]:
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": request.prompt})
        body: dict[str, Any] = {"model": model, "messages": messages}
        if request.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """One chat completion; ``TransientError`` / ``ExecutionError`` on failure."""
        model = request.model or DEFAULT_MODEL
        data, elapsed_ms = await self._http.post(self._body(request, model))
        message, finish = first_choice(data)
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise malformed("openai", "choices[0].message.content is not a string")
        return one_call_result(content or "", usage(data, model), elapsed_ms, finish)
