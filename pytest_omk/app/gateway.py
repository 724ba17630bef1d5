"""The model gateway: a loopback endpoint through which an app under test reaches its models.

The app runs live (it is the code under test); the provider calls it makes go to this endpoint,
because the run points ``OPENAI_BASE_URL`` and ``ANTHROPIC_BASE_URL`` at it (in this process for
``python:``, hook and fixture apps; per sample for ``command:`` scripts). Each call is replayed
from, or recorded to, the run's :class:`~pytest_omk.recordings.store.RecordingStore` under the
record mode, like the built-in executors' calls, and a live call goes on to the real provider
(the address the variables had before the run). Keys and stored answers:
:mod:`pytest_omk.app.calls`; which sample a call belongs to:
:mod:`pytest_omk.app.runs`. No pytest here.

Routes: ``/<run>/<api>/<provider path>``, where ``<run>`` is ``_`` (the process-wide URL) or a
run's token, and ``<api>`` is ``openai`` or ``anthropic``.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from pytest_omk.app import in_process
from pytest_omk.app.calls import (
    KEPT_RESPONSE_HEADERS,
    KIND,
    call_identity,
    repeat_key,
    replayed_answer,
    request_body,
    stored_answer,
)
from pytest_omk.app.metering import Meter
from pytest_omk.app.runs import UNATTRIBUTED, AppRun, AppRuns
from pytest_omk.app.server import HttpRequest, HttpResponse, LoopbackServer
from pytest_omk.errors import BudgetExhausted, ReplayMissError
from pytest_omk.execute.pricing import PriceBook
from pytest_omk.models.accounting import CallLedger
from pytest_omk.recordings.store import RecordingStore

if TYPE_CHECKING:
    from pytest_omk.execute.budget import Budget
    from pytest_omk.execute.retry import AdaptiveLimiter

DEFAULT_UPSTREAMS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
ENV_NAMES = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
SHARED_ROUTE = "_"
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host", "content-length",
     "accept-encoding", "proxy-authorization", "proxy-connection"}
)  # fmt: skip
_ERROR_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry")


def upstreams_from(environ: Mapping[str, str]) -> dict[str, str]:
    """Where live calls go: the provider variables as they were before the run, or the defaults."""
    return {api: (environ.get(name) or DEFAULT_UPSTREAMS[api]).rstrip("/") for api, name in ENV_NAMES.items()}


@dataclass(frozen=True)
class _Call:
    """One call of the app as the gateway sees it: the provider URL, whose it is, its identity."""

    url: str
    run: AppRun | None
    scope: tuple[str, str] | None
    identity: dict[str, Any]
    repeated: str
    occurrence: int


class _Answered(Exception):
    """A live call the provider refused (not 2xx): sent back to the app as is, never recorded."""

    def __init__(self, response: HttpResponse) -> None:
        super().__init__(response.status)
        self.response = response


class ModelGateway:
    """One process's gateway: replays or records the app's model calls through ``store``."""

    def __init__(
        self,
        store: RecordingStore,
        upstreams: Mapping[str, str],
        *,
        timeout: float,
        keys: Mapping[str, str] | None = None,
        budget: Budget | None = None,
        prices: PriceBook | None = None,
        limiter: AdaptiveLimiter | None = None,
        ledger: CallLedger | None = None,
    ) -> None:
        self.store = store
        self.upstreams = dict(upstreams)
        self.timeout = timeout
        self.keys = dict(keys or {})
        """Stand-in API keys handed to the app with the URLs (a replay needs none, an SDK wants one)."""
        self.prices = prices or PriceBook()
        self.meter = Meter(
            ledger or (budget.ledger if budget is not None else CallLedger()), budget, self.prices
        )
        """Records each call in the ledger; a live call asks the run's budget first."""
        self.limiter = limiter
        """The executors' concurrency limit, which the app's live calls share."""
        self.runs = AppRuns()
        self._server = LoopbackServer(self.handle, quick=self.replay_now)
        self._client: httpx.AsyncClient | None = None

    def start(self) -> None:
        """Listen on a free loopback port; httpx clients in this process skip the socket."""
        self._server.start()
        in_process.attach(self._server)

    def env(self, run: AppRun | None = None) -> dict[str, str]:
        """``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL`` pointing here (for one run, or shared)."""
        route = run.token if run is not None else SHARED_ROUTE
        base = f"http://127.0.0.1:{self._server.port}/{route}"
        urls = {ENV_NAMES[api]: f"{base}/{api}{urlsplit(url).path}" for api, url in self.upstreams.items()}
        return {**self.keys, **urls}

    def stop(self) -> None:
        """Stop serving and close the connections to the providers."""
        in_process.detach(self._server)
        self._server.stop(self._close_client())

    async def _close_client(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def handle(self, request: HttpRequest) -> HttpResponse:
        """Answer one call of the app: replayed, or live (and recorded when the mode records)."""
        call = self._prepare(request)
        if isinstance(call, HttpResponse):
            return call
        answered = False
        try:
            payload, replayed = await self._answer(call.identity, request, call.url, call.run)
            answered = True
        except _Answered as refused:
            return refused.response
        except BudgetExhausted as spent:
            self._refused(call.run, str(spent))
            return _error(402, f"pytest-omk: {spent}")
        except ReplayMissError as miss:
            self._missed(call.run, str(miss))
            return _error(404, str(miss))
        finally:
            self.runs.end(call.scope, call.repeated, call.occurrence, answered=answered)
        return self._respond(call, payload, replayed)

    def replay_now(self, request: HttpRequest) -> HttpResponse | None:
        """The answer to a call that replays, made on the caller's thread (an app in this process
        reaching the gateway through httpx, see :mod:`~pytest_omk.app.in_process`): no hand-over
        to the gateway's loop and back. ``None`` when the call does not simply replay (a live call,
        a miss, an unreadable recording): :meth:`handle` then answers it as any call."""
        if not self.store.replays:
            return None
        call = self._prepare(request)
        if isinstance(call, HttpResponse):
            return call
        try:
            payload = self._recorded(call)
        except Exception:  # a broken recording: the ordinary path reports it
            payload = None
        # A call not answered here gives its occurrence back, so the ordinary path takes the same.
        self.runs.end(call.scope, call.repeated, call.occurrence, answered=payload is not None)
        return None if payload is None else self._respond(call, payload, True)

    def _prepare(self, request: HttpRequest) -> _Call | HttpResponse:
        """Where the call goes, whose it is, and its identity with its occurrence taken."""
        route, api, rest = _split_route(request.target)
        upstream = self.upstreams.get(api)
        if upstream is None:
            return _error(404, f"pytest-omk's model gateway has no route {request.target.split('?')[0]!r}")
        parts = urlsplit(upstream)
        url = f"{parts.scheme}://{parts.netloc}{rest}"
        body = request_body(request.body, request.headers.get("content-type", ""))
        named = self.runs.named(route) if route != SHARED_ROUTE else None
        run = named or self.runs.guess(body)
        scope = named.scope if named is not None else None
        identity = call_identity(
            api=api, url=url, method=request.method, headers=request.headers, body=body, occurrence=0
        )
        repeated = repeat_key(identity)
        occurrence = self.runs.take(scope, repeated)
        identity["occurrence"] = occurrence
        return _Call(url, run, scope, identity, repeated, occurrence)

    def _recorded(self, call: _Call) -> dict[str, Any] | None:
        """The recorded answer to ``call`` if there is one (replay modes only)."""
        label = call.run.label if call.run is not None else UNATTRIBUTED
        if self.store.replay_only and call.occurrence > 0:
            earlier = self._earlier_occurrence(call.identity, label)
            if earlier is not None:
                return earlier
        return self.store.get(KIND, call.identity, label=label)

    def _respond(self, call: _Call, payload: dict[str, Any], replayed: bool) -> HttpResponse:
        if call.run is not None:
            self.runs.count(call.run, replayed=replayed)
        if replayed:
            self.meter.replayed(
                call.identity, payload, call.url, call.run.log if call.run is not None else None
            )
        try:
            status, headers, data = replayed_answer(payload)
        except ValueError as exc:
            return _error(502, f"pytest-omk: the recording of this call is unusable: it {exc}")
        return HttpResponse(status, data, headers)

    async def _answer(
        self, identity: dict[str, Any], request: HttpRequest, url: str, run: AppRun | None
    ) -> tuple[dict[str, Any], bool]:
        label = run.label if run is not None else UNATTRIBUTED
        source, log = (run.source, run.log) if run is not None else (None, None)
        if self.store.replay_only and identity["occurrence"] > 0:
            earlier = self._earlier_occurrence(identity, label)
            if earlier is not None:
                return earlier, True

        async def live() -> dict[str, Any]:
            forward = functools.partial(self._forward, request, url)
            # The executors' limit (--omk-concurrency): an app fanning out waits for slots.
            async with self.limiter.slot() if self.limiter is not None else contextlib.nullcontext():
                answer, refused = await self.meter.live(identity, url, len(request.body), forward, log)
            if refused is not None:  # the call was made (and counts), but its answer is not believable
                raise _Answered(_error(502, f"pytest-omk: {refused}"))
            return answer

        return await self.store.call_raw(KIND, identity, live, label=label, source=source)

    def _earlier_occurrence(self, identity: dict[str, Any], label: str) -> dict[str, Any] | None:
        """Replay only: a repetition never recorded replays the last one that was (as vcrpy's
        ``allow_playback_repeats``): one recorded under ``-n 2`` may be replayed in one process."""
        if self.store.get(KIND, identity, label=label) is not None:
            return None  # recorded: the ordinary path replays it
        for number in range(identity["occurrence"] - 1, -1, -1):
            found = self.store.get(KIND, {**identity, "occurrence": number}, label=label)
            if found is not None:
                return found
        return None

    async def _forward(self, request: HttpRequest, url: str) -> dict[str, Any]:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
        query = request.target.partition("?")[2]
        headers = {k: v for k, v in request.headers.items() if k not in _HOP_BY_HOP}
        try:
            response = await self._client.request(
                request.method, url + (f"?{query}" if query else ""), headers=headers, content=request.body
            )
        except httpx.HTTPError as exc:
            reason = type(exc).__name__
            raise _Answered(_error(502, f"pytest-omk could not reach {url}: {reason}")) from None
        if not 200 <= response.status_code < 300:
            kept = {name: response.headers[name] for name in (*KEPT_RESPONSE_HEADERS, *_ERROR_HEADERS)
                    if name in response.headers}  # fmt: skip
            raise _Answered(HttpResponse(response.status_code, response.content, kept))
        return stored_answer(response.status_code, dict(response.headers), response.content)

    def _refused(self, run: AppRun | None, message: str) -> None:
        # As a miss: the run it belongs to, or every open run when none can be named.
        for blamed in [run] if run is not None else self.runs.open_runs():
            blamed.refused.append(message)

    def _missed(self, run: AppRun | None, message: str) -> None:
        # A miss no run can be found for is blamed on every open run: over-blaming costs an
        # ERROR to investigate, under-blaming a pass on an answer the app made up after the miss.
        for blamed in [run] if run is not None else self.runs.open_runs():
            blamed.misses.append(message)


def _split_route(target: str) -> tuple[str, str, str]:
    path, _, _ = target.partition("?")
    parts = path.split("/", 3)
    if len(parts) < 3 or parts[0] != "":
        return "", "", ""
    return parts[1], parts[2], "/" + (parts[3] if len(parts) > 3 else "")


def _error(status: int, message: str) -> HttpResponse:
    """An error body both SDKs read (``error.message``); ``x-should-retry: false`` stops their retries."""
    body = json.dumps({"error": {"message": message, "type": "pytest_omk_gateway"}}).encode()
    return HttpResponse(status, body, {"content-type": "application/json", "x-should-retry": "false"})
