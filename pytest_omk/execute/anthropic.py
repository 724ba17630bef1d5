"""The ``anthropic`` executor: Anthropic's Messages API over HTTP.

``POST ${ANTHROPIC_BASE_URL or https://api.anthropic.com}/v1/messages`` with the prompt as the one
user message and the system prompt in ``system``, as upstream's ``anthropic-api`` executor does.
A base URL that already ends in ``/v1`` is accepted too (the suffix is not doubled).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import httpx

from pytest_omk.errors import ConfigError
from pytest_omk.execute.base import ExecutionRequest
from pytest_omk.execute.http_client import JsonApiClient
from pytest_omk.execute.http_errors import malformed
from pytest_omk.execute.pricing import cost_usd, priced_name
from pytest_omk.models.results import ExecutionResult

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-sonnet-4-5"
API_VERSION = "2023-06-01"
MAX_TOKENS = 8192


def messages_url(base_url: str) -> str:
    """``base_url`` + ``/v1/messages`` (a trailing ``/v1`` in ``base_url`` is not repeated)."""
    try:
        url = httpx.URL(base_url.strip())
    except httpx.InvalidURL as exc:
        raise ConfigError(f"ANTHROPIC_BASE_URL is not a valid URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigError(f"ANTHROPIC_BASE_URL must be an http(s) URL with a host, got {base_url!r}")
    path = url.path.rstrip("/").removesuffix("/v1")
    return str(url.copy_with(path=path + "/v1/messages"))


def _tokens(usage: Mapping[str, Any], key: str) -> int | None:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class AnthropicExecutor:
    """Sends the prompt as one Messages API call and reports text, tokens and cost."""

    id = "anthropic"
    supports_mocks = False

    def __init__(
        self,
        timeout: float = 120.0,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """Read ``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY`` from ``env`` (default
        ``os.environ``) unless given; a missing key is a ``ConfigError`` at the first live call."""
        environ = os.environ if env is None else env
        self.url = messages_url(base_url or environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL)
        # A missing key is reported when a live call is attempted, not here: a run that replays
        # recordings (CI) needs no key at all.
        self._api_key = api_key or environ.get("ANTHROPIC_API_KEY") or ""
        self._http = JsonApiClient(
            provider="anthropic", timeout=timeout, secrets=(self._api_key,), transport=transport
        )

    def __repr__(self) -> str:
        # The key is deliberately absent: reprs end up in tracebacks and logs.
        return f"AnthropicExecutor(url={self.url!r})"

    @staticmethod
    def _body(request: ExecutionRequest, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": MAX_TOKENS,
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
        if not self._api_key:
            raise ConfigError("ANTHROPIC_API_KEY environment variable is not set")
        model = request.model or DEFAULT_MODEL
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "x-api-key": self._api_key,
            "anthropic-version": API_VERSION,
        }
        data, elapsed_ms = await self._http.post(self.url, headers=headers, body=self._body(request, model))
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise malformed("anthropic", "no content in the response")
        text = "".join(
            block["text"]
            for block in blocks
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
        raw_usage = data.get("usage")
        usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        fresh = _tokens(usage, "input_tokens")
        output_tokens = _tokens(usage, "output_tokens")
        cache_read = _tokens(usage, "cache_read_input_tokens") or 0
        cache_write = _tokens(usage, "cache_creation_input_tokens") or 0
        # input_tokens excludes cached prompt tokens; report the whole prompt, bill each part at its rate.
        input_tokens = None if fresh is None else fresh + cache_read + cache_write
        cost = None
        if fresh is not None and output_tokens is not None:
            # The requested alias first; the served snapshot name (``data.model``) as a fallback.
            cost = cost_usd(
                priced_name(model, data.get("model")),
                fresh,
                output_tokens,
                cache_read_tokens=cache_read,
                cache_write_tokens=cache_write,
            )
        stop = data.get("stop_reason")
        return ExecutionResult(
            output=text,
            inputTokens=input_tokens,
            outputTokens=output_tokens,
            costUSD=cost,
            latencyMs=elapsed_ms,
            durationApiMs=elapsed_ms,
            numTurns=1,
            stopReason=stop if isinstance(stop, str) else None,
        )

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._http.aclose()
