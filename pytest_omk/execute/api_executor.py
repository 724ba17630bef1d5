"""What the ``openai`` and ``anthropic`` executors share: one API call per sample.

:class:`ApiExecutor` builds the provider's :class:`~pytest_omk.execute.http_client.ApiEndpoint`
and :class:`~pytest_omk.execute.http_client.JsonApiClient`, keeps the API key out of its repr and
closes the client; :func:`one_call_result` turns an answer's text, usage and timing into the
:class:`~pytest_omk.models.results.ExecutionResult` of a single-turn call.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from pytest_omk.execute.base import ExecutorDefaults
from pytest_omk.execute.http_client import ApiEndpoint, JsonApiClient, Usage
from pytest_omk.execute.http_errors import display_url
from pytest_omk.execute.pricing import PriceBook
from pytest_omk.execute.tls import SharedTls
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest


class ApiExecutor(ExecutorDefaults):
    """Base of the HTTP API executors; a subclass sets ``id`` and implements ``endpoint`` and
    ``execute``."""

    id: str
    supports_mocks = False

    def __init__(
        self,
        timeout: float = 120.0,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        env: Mapping[str, str] | None = None,
        prices: PriceBook | None = None,
    ) -> None:
        """Use ``base_url`` / ``api_key``, else the API's variables in ``env`` (default
        ``os.environ``); a required key that is missing is a ``ConfigError`` at the first live call.
        ``prices`` says what a call costs (default: list prices at the provider's own endpoint)."""
        api = self.endpoint(env, base_url=base_url, api_key=api_key)
        self.prices = prices or PriceBook()
        self.shown_url = display_url(httpx.URL(api.url))
        """The endpoint as reports show it: no credentials, no query."""
        self._http = JsonApiClient(api, timeout=timeout, transport=transport)
        self.url = api.url

    @property
    def api_endpoint(self) -> ApiEndpoint:
        """Where calls go: its URL is part of the recording key (see :mod:`pytest_omk.recordings.endpoints`)."""
        return self._http.endpoint

    @staticmethod
    def endpoint(env: Mapping[str, str] | None, *, base_url: str | None, api_key: str | None) -> ApiEndpoint:
        """The provider's endpoint (see :func:`pytest_omk.execute.openai.endpoint`)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        # The key is deliberately absent: reprs end up in tracebacks and logs.
        return f"{type(self).__name__}(url={self.url!r})"

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """One API call; ``TransientError`` / ``ExecutionError`` on failure."""
        raise NotImplementedError

    def share_tls(self, tls: SharedTls) -> None:
        """Use the run's one TLS context (see :meth:`JsonApiClient.share_tls`)."""
        self._http.share_tls(tls)

    async def warm(self) -> None:
        """Open the HTTP client ahead of the first call (see :meth:`JsonApiClient.warm`)."""
        await self._http.warm()

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._http.aclose()


def one_call_result(
    output: str,
    usage: Usage,
    elapsed_ms: float,
    stop_reason: str | None,
    *,
    endpoint: str | None = None,
    served_model: str | None = None,
) -> ExecutionResult:
    """The result of a single-turn call that took ``elapsed_ms`` (latency and API time alike),
    answered at ``endpoint`` by ``served_model`` (what the server said answered)."""
    return ExecutionResult(
        endpoint=endpoint,
        servedModel=served_model,
        output=output,
        inputTokens=usage.input_tokens,
        outputTokens=usage.output_tokens,
        costUSD=usage.cost,
        latencyMs=elapsed_ms,
        durationApiMs=elapsed_ms,
        numTurns=1,
        stopReason=stop_reason,
    )
