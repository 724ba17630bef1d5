"""The one HTTP code path of the API executors: POST a JSON body, get a JSON object back.

Each executor owns one :class:`JsonApiClient`, which owns one ``httpx.AsyncClient`` so that
connections are kept alive across calls. An ``httpx.AsyncClient``'s pooled connections belong to
the event loop that opened them; if the caller drives the executor from a new loop (for example
one ``asyncio.run`` per test item), the client is replaced rather than reused across loops,
which would otherwise fail with "Event loop is closed".
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from typing import Any

import httpx

from pytest_omk.execute.http_errors import check_status, json_object, timed_out, transport_error


class JsonApiClient:
    """POSTs JSON to one provider with a per-call deadline and our error mapping."""

    def __init__(
        self,
        *,
        provider: str,
        timeout: float,
        secrets: tuple[str | None, ...] = (),
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        self.provider = provider
        self.timeout = timeout
        self._secrets = secrets
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _current_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            # The old client's connections belong to a loop that is gone; let them be collected.
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout),
                transport=self._transport,
                follow_redirects=False,
                trust_env=True,
            )
            self._loop = loop
        return self._client

    async def post(
        self, url: str, *, headers: Mapping[str, str], body: Mapping[str, Any]
    ) -> tuple[dict[str, Any], float]:
        """POST ``body`` to ``url``; return the JSON object answered and the elapsed milliseconds.

        Raises ``TransientError`` or ``ExecutionError`` as described in :mod:`http_errors`.
        """
        client = self._current_client()
        target = httpx.URL(url)
        started = time.perf_counter()
        try:
            # httpx's timeout bounds each read, not the call: a body trickling in byte by byte
            # would never trip it, so the whole exchange also runs under one deadline.
            async with asyncio.timeout(self.timeout):
                response = await client.post(target, json=dict(body), headers=dict(headers))
        except TimeoutError:
            raise timed_out(self.provider, self.timeout, target) from None
        except (httpx.TransportError, httpx.DecodingError) as exc:
            raise transport_error(exc, provider=self.provider, timeout=self.timeout, url=target) from exc
        elapsed_ms = (time.perf_counter() - started) * 1000
        check_status(response, provider=self.provider, secrets=self._secrets)
        return json_object(response, provider=self.provider), elapsed_ms

    async def aclose(self) -> None:
        """Close the HTTP client (a client opened on another, finished loop is just dropped)."""
        client, loop = self._client, self._loop
        self._client = self._loop = None
        if client is None:
            return
        if loop is asyncio.get_running_loop():
            await client.aclose()
        else:
            with contextlib.suppress(Exception):
                await client.aclose()
