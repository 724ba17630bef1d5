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

from pytest_omk.errors import ExecutionError
from pytest_omk.execute.api_executor import ApiExecutor, one_call_result
from pytest_omk.execute.http_client import (
    ApiEndpoint,
    Usage,
    http_base_url,
    json_int,
    json_str,
)
from pytest_omk.execute.http_errors import RefusedRequest, malformed
from pytest_omk.execute.pricing import PriceBook
from pytest_omk.models.results import ExecutionResult, ResponseFormatRefusal
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


def usage(data: Mapping[str, Any], model: str, prices: PriceBook, url: str) -> Usage:
    """Prompt and completion tokens and their cost at ``url`` (cached prompt tokens at the
    cache-read rate; ``None`` when no price is known to be true there, see :class:`PriceBook`)."""
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
        cost = prices.cost(
            model,
            json_str(data.get("model")),
            url=url,
            input_tokens=prompt_tokens - cached,
            output_tokens=completion_tokens,
            cache_read_tokens=cached,
        )
    return Usage(prompt_tokens, completion_tokens, cost)


def response_format(request: ExecutionRequest) -> dict[str, Any] | None:
    """The ``response_format`` a request asks for: a JSON schema, a JSON object, or none."""
    if request.json_schema is not None:
        schema = {"name": "omk_judge_score", "strict": True, "schema": dict(request.json_schema)}
        return {"type": "json_schema", "json_schema": schema}
    return {"type": "json_object"} if request.json_mode else None


def max_tokens_field(url: str) -> str:
    """``max_completion_tokens`` for OpenAI itself (its reasoning models refuse ``max_tokens``),
    ``max_tokens`` for every other server (llama.cpp, vLLM, Ollama, LM Studio read that one)."""
    return "max_completion_tokens" if httpx.URL(url).host == _KEY_REQUIRED_HOST else "max_tokens"


class OpenAIExecutor(ApiExecutor):
    """Sends the prompt (and system prompt) as one chat completion and reports what came back.

    Reads ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` from ``env`` (default ``os.environ``) unless
    given; a call to api.openai.com without a key raises ``ConfigError``. A server that answers 400
    to the ``response_format`` of a judge call is asked once more without it; when that works, every
    later call of this executor goes without it (:attr:`refused_format`), and each result says so.
    """

    id = "openai"
    endpoint = staticmethod(endpoint)
    refused_format: ResponseFormatRefusal | None = None
    """What this endpoint refused, once it has (it is not asked for again in this run)."""

    def _body(
        self, request: ExecutionRequest, model: str, structured: dict[str, Any] | None
    ) -> dict[str, Any]:
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": request.prompt})
        body: dict[str, Any] = {"model": model, "messages": messages}
        if structured is not None:
            body["response_format"] = structured
        if request.max_tokens is not None:
            body[max_tokens_field(self.url)] = request.max_tokens
        return body

    async def _post(
        self, request: ExecutionRequest, model: str
    ) -> tuple[dict[str, Any], float, ResponseFormatRefusal | None]:
        """The answer, its time, and the refusal it was made without (if the format was dropped)."""
        structured = response_format(request)
        if structured is None or self.refused_format is not None:
            data, elapsed_ms = await self._http.post(self._body(request, model, None))
            return data, elapsed_ms, self.refused_format if structured is not None else None
        kind = structured["type"]
        try:
            data, elapsed_ms = await self._http.post(self._body(request, model, structured))
        except RefusedRequest as refused:
            if refused.status != 400:
                raise ExecutionError(f"{refused} (sent with response_format {kind})") from refused
            first = refused
        else:
            return data, elapsed_ms, None
        try:
            data, elapsed_ms = await self._http.post(self._body(request, model, None))
        except RefusedRequest as again:
            raise ExecutionError(
                f"{again} (sent with response_format {kind}, and again without it)"
            ) from again
        # Asked without it, the server answered: the format was the trouble. Remember it.
        self.refused_format = ResponseFormatRefusal(format=kind, reason=str(first))
        return data, elapsed_ms, self.refused_format

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """One chat completion; ``TransientError`` / ``ExecutionError`` on failure."""
        model = request.model or DEFAULT_MODEL
        data, elapsed_ms, refusal = await self._post(request, model)
        message, finish = first_choice(data)
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise malformed("openai", "choices[0].message.content is not a string")
        counts = usage(data, model, self.prices, self.url)
        served = json_str(data.get("model"))
        result = one_call_result(
            content or "", counts, elapsed_ms, finish, endpoint=self.shown_url, served_model=served
        )
        return result if refusal is None else result.model_copy(update={"responseFormatRefused": refusal})
