"""The one HTTP code path of the API executors: POST a JSON body, get a JSON object back.

An :class:`ApiEndpoint` says where and how one provider is called (URL, headers, API key); the
``openai`` and ``anthropic`` modules build theirs, used by both the plain executors and the
agent's tool-calling providers. Each executor owns one :class:`JsonApiClient`, which owns one
``httpx.AsyncClient`` so that connections are kept alive across calls. An ``httpx.AsyncClient``'s pooled connections belong to
the event loop that opened them; if the caller drives the executor from a new loop (for example
one ``asyncio.run`` per test item), the client is replaced rather than reused across loops,
which would otherwise fail with "Event loop is closed".
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import httpx

from pytest_omk._util.bodies import read_capped
from pytest_omk.errors import ConfigError, ExecutionError
from pytest_omk.execute.client_set import POOL_LIMITS, ClientSet
from pytest_omk.execute.http_errors import check_status, json_object, timed_out, transport_error
from pytest_omk.execute.tls import SharedTls


def http_base_url(base_url: str, variable: str) -> httpx.URL:
    """``base_url`` parsed; ``ConfigError`` naming ``variable`` unless it is an http(s) URL with a host."""
    try:
        url = httpx.URL(base_url.strip())
    except httpx.InvalidURL as exc:
        raise ConfigError(f"{variable} is not a valid URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigError(f"{variable} must be an http(s) URL with a host, got {base_url!r}")
    return url


MAX_COUNT = 10**12
"""Largest token count believed from a provider (more is a broken or hostile answer)."""
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""Largest provider response body read (decoded); a larger one is an execution error."""


def json_int(value: Any) -> int | None:
    """``value`` as a count when it is a JSON integer, or a float with an integral value (``20.0``:
    some servers write counts so); ``None`` when it is absent or not a number (a bool neither).

    A negative, non-integral or non-finite count, or one beyond :data:`MAX_COUNT` (a 400-digit
    number), is an :class:`ExecutionError`: it would make the cost negative (and ``cost_max``
    pass), overflow, or let a budget count nothing for a call that used tokens.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ExecutionError(
                f"the provider reported an invalid token count {value!r} (allowed: whole numbers)"
            )
        value = int(value)
    if value < 0 or value > MAX_COUNT:
        shown = str(value) if len(str(value)) <= 20 else f"{str(value)[:20]}... ({len(str(value))} digits)"
        raise ExecutionError(
            f"the provider reported an invalid token count {shown} (allowed: 0 to {MAX_COUNT})"
        )
    return int(value)


def json_str(value: Any) -> str | None:
    """``value`` when it is a string, else ``None``."""
    return value if isinstance(value, str) else None


async def _capped_post(
    client: httpx.AsyncClient, target: httpx.URL, body: Mapping[str, Any], headers: Mapping[str, str]
) -> httpx.Response:
    """POST and read the answer, refusing a body over :data:`MAX_RESPONSE_BYTES` (decoded) early."""
    request = client.build_request("POST", target, json=dict(body), headers=dict(headers))
    response = await client.send(request, stream=True)
    try:
        data = await read_capped(response.aiter_bytes(), MAX_RESPONSE_BYTES, _too_large)
    finally:
        await response.aclose()
    kept = [
        (k, v)
        for k, v in response.headers.multi_items()
        if k.lower() not in ("content-encoding", "content-length")
    ]
    return httpx.Response(response.status_code, headers=kept, content=data, request=request)


def _too_large() -> ExecutionError:
    return ExecutionError(f"the provider's response is larger than {MAX_RESPONSE_BYTES} bytes")


class Usage(NamedTuple):
    """The token counts and cost of one API answer (``None`` where the provider did not say)."""

    input_tokens: int | None
    output_tokens: int | None
    cost: float | None


@dataclass(frozen=True)
class ApiEndpoint:
    """Where and how one provider is called."""

    provider: str
    url: str
    headers: Mapping[str, str]
    api_key: str | None
    missing_key: str | None = None
    """The ``ConfigError`` message of a live call, when a required key is absent. It is raised at
    the first call rather than at construction: replaying recordings (CI) needs no key at all."""


class JsonApiClient:
    """POSTs JSON to one provider's endpoint with a per-call deadline and our error mapping."""

    def __init__(
        self,
        endpoint: ApiEndpoint,
        *,
        timeout: float,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        self.endpoint = endpoint
        self.provider = endpoint.provider
        self.timeout = timeout
        self._secrets = (endpoint.api_key,)
        self._transport = transport
        self._tls: SharedTls | None = None
        self.clients = ClientSet(self._new_client)

    def share_tls(self, tls: SharedTls) -> None:
        """Build clients with the run's one TLS context (set before the first call is submitted).

        An ``httpx.AsyncClient`` otherwise loads the CA bundle itself when it is created (tens of
        milliseconds, inside the first call, which the whole first wave then waits for).
        """
        self._tls = tls

    async def warm(self) -> None:
        """Build the connection pool now, on the running loop, ahead of the first call."""
        self.clients.first()

    def _new_client(self) -> httpx.AsyncClient:
        if self._tls is None and self._transport is None:
            # More than one client may be opened: they share one context (one CA bundle load).
            self._tls = SharedTls()
        return httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout),
            transport=self._transport,
            verify=True if self._tls is None else self._tls.context(),
            follow_redirects=False,
            trust_env=True,
            limits=POOL_LIMITS,
        )

    async def post(self, body: Mapping[str, Any]) -> tuple[dict[str, Any], float]:
        """POST ``body`` to the endpoint; return the JSON object answered and the elapsed milliseconds.

        Raises ``ConfigError`` when the endpoint's required key is missing, and ``TransientError``
        or ``ExecutionError`` as described in :mod:`http_errors`.
        """
        if self.endpoint.missing_key is not None:
            raise ConfigError(self.endpoint.missing_key)
        headers = self.endpoint.headers
        target = httpx.URL(self.endpoint.url)
        started = time.perf_counter()
        try:
            # httpx's timeout bounds each read, not the call: a body trickling in byte by byte
            # would never trip it, so the whole exchange also runs under one deadline.
            with self.clients.lease() as client:
                async with asyncio.timeout(self.timeout):
                    response = await _capped_post(client, target, body, headers)
        except TimeoutError:
            raise timed_out(self.provider, self.timeout, target) from None
        except (httpx.TransportError, httpx.DecodingError) as exc:
            raise transport_error(exc, provider=self.provider, timeout=self.timeout, url=target) from exc
        elapsed_ms = (time.perf_counter() - started) * 1000
        check_status(response, provider=self.provider, secrets=self._secrets)
        return json_object(response, provider=self.provider, secrets=self._secrets), elapsed_ms

    async def aclose(self) -> None:
        """Close the HTTP clients (those opened on another, finished loop are just dropped)."""
        await self.clients.aclose()
