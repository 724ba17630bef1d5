"""The ``anthropic`` executor: Anthropic's Messages API over HTTP.

``POST ${ANTHROPIC_BASE_URL or https://api.anthropic.com}/v1/messages`` with the prompt as the one
user message and the system prompt in ``system``, as upstream's ``anthropic-api`` executor does.
A base URL that already ends in ``/v1`` is accepted too (the suffix is not doubled).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pytest_omk.execute.api_executor import ApiExecutor, one_call_result
from pytest_omk.execute.http_client import (
    ApiEndpoint,
    Usage,
    http_base_url,
    json_int,
    json_str,
)
from pytest_omk.execute.http_errors import malformed
from pytest_omk.execute.pricing import PriceBook
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-sonnet-4-5"
API_VERSION = "2023-06-01"
MAX_TOKENS = 8192


def messages_url(base_url: str) -> str:
    """``base_url`` + ``/v1/messages`` (a trailing ``/v1`` in ``base_url`` is not repeated)."""
    url = http_base_url(base_url, "ANTHROPIC_BASE_URL")
    path = url.path.rstrip("/").removesuffix("/v1")
    return str(url.copy_with(path=path + "/v1/messages"))


def endpoint(
    env: Mapping[str, str] | None = None, *, base_url: str | None = None, api_key: str | None = None
) -> ApiEndpoint:
    """The Messages API endpoint from ``base_url`` / ``api_key``, else ``ANTHROPIC_BASE_URL`` /
    ``ANTHROPIC_API_KEY`` in ``env`` (default ``os.environ``); a live call needs the key."""
    environ = os.environ if env is None else env
    url = messages_url(base_url or environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL)
    key = api_key or environ.get("ANTHROPIC_API_KEY") or ""
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "x-api-key": key,
        "anthropic-version": API_VERSION,
    }
    missing = None if key else "ANTHROPIC_API_KEY environment variable is not set"
    return ApiEndpoint("anthropic", url, headers, key, missing)


def content_blocks(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The answer's content blocks (objects only); a malformed-response error without a list."""
    blocks = data.get("content")
    if not isinstance(blocks, list):
        raise malformed("anthropic", "no content in the response")
    return [block for block in blocks if isinstance(block, dict)]


def text_of(blocks: list[dict[str, Any]]) -> str:
    """The text blocks joined."""
    return "".join(
        block["text"]
        for block in blocks
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    )


def usage(data: Mapping[str, Any], model: str, prices: PriceBook, url: str) -> Usage:
    """The whole prompt's tokens (cached parts included), output tokens, and the cost at ``url``
    (``None`` when no price is known to be true there, see :class:`PriceBook`)."""
    raw_usage = data.get("usage")
    counts: Mapping[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    fresh = json_int(counts.get("input_tokens"))
    output_tokens = json_int(counts.get("output_tokens"))
    cache_read = json_int(counts.get("cache_read_input_tokens")) or 0
    cache_write = json_int(counts.get("cache_creation_input_tokens")) or 0
    # input_tokens excludes cached prompt tokens; report the whole prompt, bill each part at its rate.
    input_tokens = None if fresh is None else fresh + cache_read + cache_write
    cost = None
    if fresh is not None and output_tokens is not None:
        # The requested alias first; the served snapshot name (``data.model``) as a fallback.
        cost = prices.cost(
            model,
            json_str(data.get("model")),
            url=url,
            input_tokens=fresh,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        )
    return Usage(input_tokens, output_tokens, cost)


class AnthropicExecutor(ApiExecutor):
    """Sends the prompt as one Messages API call and reports text, tokens and cost.

    Reads ``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY`` from ``env`` (default ``os.environ``)
    unless given; a missing key is a ``ConfigError`` at the first live call.
    """

    id = "anthropic"
    endpoint = staticmethod(endpoint)

    @staticmethod
    def _body(request: ExecutionRequest, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": MAX_TOKENS if request.max_tokens is None else request.max_tokens,
            "messages": [{"role": "user", "content": request.prompt}],
        }
        if request.system:
            body["system"] = request.system
        return body

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """One Messages API call; ``TransientError`` / ``ExecutionError`` on failure.

        ``json_mode`` adds nothing to the request: the Messages API has no JSON switch, and judge
        prompts already ask for JSON in words.
        """
        model = request.model or DEFAULT_MODEL
        data, elapsed_ms = await self._http.post(self._body(request, model))
        text = text_of(content_blocks(data))
        counts = usage(data, model, self.prices, self.url)
        return one_call_result(
            text,
            counts,
            elapsed_ms,
            json_str(data.get("stop_reason")),
            endpoint=self.shown_url,
            served_model=json_str(data.get("model")),
        )
