"""The model gateway: a loopback endpoint through which an app under test reaches its models.

The app runs live (it is the code under test); the provider calls it makes go to this endpoint,
because the run points ``OPENAI_BASE_URL`` and ``ANTHROPIC_BASE_URL`` at it (in this process for
``python:``, hook and fixture apps; per sample for ``command:`` scripts). Each call is replayed
from, or recorded to, the run's :class:`~pytest_omk.recordings.store.RecordingStore` under the
record mode, like the built-in executors' calls, and a live call goes on to the real provider
(the address the variables had before the run). Keys and stored answers:
:mod:`pytest_omk.app.calls`; which sample a call belongs to:
:mod:`pytest_omk.app.runs`. No pytest here.

Routes: ``/<secret>/<run>/<api>/<provider path>``, where ``<secret>`` is the process's (see
:mod:`pytest_omk.app.admission`: a request without it, or naming no open run, is refused before its
body is read), ``<run>`` is ``_`` (the process-wide URL) or a run's token, and ``<api>`` is
``openai`` or ``anthropic``. A miss's explanation goes to its run's report, never into the HTTP
answer, and no message spells an upstream URL with its userinfo.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from pytest_omk.app import in_process
from pytest_omk.app.admission import SHARED_ROUTE, Admission, error, new_secret, route_of
from pytest_omk.app.calls import (
    KEPT_RESPONSE_HEADERS,
    KIND,
    answer_problem,
    call_identity,
    repeat_key,
    replayed_answer,
    request_body,
    stored_answer,
)
from pytest_omk.app.keys import refuse_placeholder
from pytest_omk.app.messages import HttpRequest, HttpResponse, Limits, without_userinfo
from pytest_omk.app.metering import Meter
from pytest_omk.app.runs import UNATTRIBUTED, AppRun, AppRuns
from pytest_omk.app.server import LoopbackServer
from pytest_omk.errors import BudgetExhausted, ReplayMissError
from pytest_omk.execute.pricing import PriceBook
from pytest_omk.models.accounting import CallLedger
from pytest_omk.recordings.repeats import OCCURRENCE, last_recorded
from pytest_omk.recordings.store import RecordingStore

if TYPE_CHECKING:
    from pytest_omk.execute.budget import Budget
    from pytest_omk.execute.retry import AdaptiveLimiter

DEFAULT_UPSTREAMS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
ENV_NAMES = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
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
        limits: Limits | None = None,
        limiter: AdaptiveLimiter | None = None,
        ledger: CallLedger | None = None,
    ) -> None:
        self.store = store
        store.checks[KIND] = answer_problem
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
        self._secret = new_secret()
        admission = Admission(
            self._secret, lambda: self._server.port, lambda token: self.runs.named(token) is not None
        )
        self._server = LoopbackServer(
            self.handle, quick=self.replay_now, guard=admission.refusal, limits=limits
        )
        self._server.saturated = self.runs.saturated
        self._client: httpx.AsyncClient | None = None

    @property
    def secret(self) -> str:
        """The per-process secret of every route (scrubbed from every sink like a key)."""
        return self._secret

    def start(self) -> None:
        """Listen on a free loopback port; httpx clients in this process skip the socket."""
        self._server.start()
        in_process.attach(self._server)

    def env(self, run: AppRun | None = None) -> dict[str, str]:
        """``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL`` pointing here (for one run, or shared)."""
        route = run.token if run is not None else SHARED_ROUTE
        base = f"http://127.0.0.1:{self._server.port}/{self._secret}/{route}"
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
            for blamed in self.runs.blamed(call.run):
                blamed.refused.append(str(spent))
            return error(402, f"pytest-omk: {spent}")
        except ReplayMissError as miss:
            # Why it missed (the recorded request, the recordings' path) is for the run's report.
            for blamed in self.runs.blamed(call.run):
                blamed.misses.append(str(miss))
            return error(
                404, "pytest-omk: this model call has no usable recording (the sample's report says why)"
            )
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
        route = route_of(request.target, self._secret)
        upstream = self.upstreams.get(route.api) if route is not None else None
        if route is None or upstream is None:
            return error(404, "pytest-omk's model gateway has no such route (the API is openai or anthropic)")
        api, parts = route.api, urlsplit(upstream)
        url = f"{parts.scheme}://{parts.netloc}{route.rest}"
        body = request_body(request.body, request.headers.get("content-type", ""))
        named = self.runs.named(route.run) if route.run != SHARED_ROUTE else None
        if named is None and route.run != SHARED_ROUTE:  # its run ended since its head was admitted
            return error(403, "pytest-omk's model gateway has no open sample run of that address")
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
            message = f"pytest-omk: the recording of this call is unusable: it {exc}"
            for blamed in self.runs.blamed(call.run):
                blamed.errors.append(message)
            return error(502, message)
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
            refuse_placeholder(request.headers, identity.get("api"))
            forward = functools.partial(self._forward, request, url)
            # The executors' limit (--omk-concurrency): an app fanning out waits for slots.
            async with self.limiter.slot() if self.limiter is not None else contextlib.nullcontext():
                answer, refused = await self.meter.live(identity, url, len(request.body), forward, log)
            if refused is not None:  # the call was made (and counts), but its answer is not believable
                raise _Answered(error(502, f"pytest-omk: {refused}"))
            return answer

        return await self.store.call_raw(KIND, identity, live, label=label, source=source)

    def _earlier_occurrence(self, identity: dict[str, Any], label: str) -> dict[str, Any] | None:
        """Replay only: a repetition never recorded replays the last one that was (as vcrpy's
        ``allow_playback_repeats``): one recorded under ``-n 2`` may be replayed in one process."""
        if self.store.get(KIND, identity, label=label) is not None:
            return None  # recorded: the ordinary path replays it
        return last_recorded(lambda earlier: self.store.get(KIND, earlier, label=label), identity, OCCURRENCE)

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
            where = without_userinfo(url)  # the userinfo of OPENAI_BASE_URL is a password
            raise _Answered(error(502, f"pytest-omk could not reach {where}: {type(exc).__name__}")) from None
        if not 200 <= response.status_code < 300:
            kept = {name: response.headers[name] for name in (*KEPT_RESPONSE_HEADERS, *_ERROR_HEADERS)
                    if name in response.headers}  # fmt: skip
            raise _Answered(HttpResponse(response.status_code, response.content, kept))
        return stored_answer(response.status_code, dict(response.headers), response.content)
