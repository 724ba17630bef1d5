"""Calls to the model gateway from this process skip the socket.

An app under test that runs in the plugin's own process (``python:``, the hook, an ``omk_app``
fixture) and talks to its model with httpx (directly, or through the openai and anthropic SDKs,
which are built on it) reaches the gateway through ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``,
like any client. Over the socket every call paid a whole HTTP round trip in Python on both ends
(the client's HTTP/1.1 writer and reader, the gateway's parser), about 2 ms per call on a 2-core
host, competing for the GIL with the run loop: that doubled the time of a replayed app sample
against the built-in ``openai`` executor replaying the same call (``benchmarks/app_replay.py``).

So, while a gateway listens, httpx's own transports (:class:`httpx.HTTPTransport` and
:class:`httpx.AsyncHTTPTransport`) hand a request addressed to it (``127.0.0.1`` and its port)
straight to the gateway's handler, on the gateway's loop as before, and build the response from
its answer. Nothing else changes: the URL, the headers and the body the handler sees are the ones
the socket would have carried, so recordings are the same whichever way a call came, and every
other request (another host, another port) goes on untouched. Subprocesses (``command:`` apps) and
other clients (requests, aiohttp) still use the socket.

A replayed call is answered on the caller's thread outright (the server's quick answer, the
gateway's ``replay_now``): the
hand-overs to the gateway's loop and back were most of what an in-process call still cost. A call
that does not simply replay (live, a miss, a broken recording) goes to the loop as before.

The patch is process-wide by nature (it is on httpx's classes); what it needs lives on the patched
functions, not in this module, and the first gateway to start installs it, the last to stop
removes it. No pytest here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from pytest_omk.app.messages import HttpRequest, HttpResponse
from pytest_omk.app.server import LoopbackServer

_MARK = "__pytest_omk_in_process__"
_LATE = "pytest-omk's model gateway did not answer in time"


@dataclass
class _Routes:
    """The gateways of this process by port, and the transport methods the patch replaced."""

    sync_original: Callable[..., httpx.Response]
    async_original: Callable[..., Any]
    servers: dict[int, LoopbackServer] = field(default_factory=dict)

    def target(self, url: httpx.URL) -> LoopbackServer | None:
        """The gateway ``url`` addresses, if it is one of this process's."""
        if url.host not in ("127.0.0.1", "localhost") or url.scheme != "http":
            return None
        return self.servers.get(url.port or 80)


def attach(server: LoopbackServer) -> None:
    """Answer httpx requests to ``server`` (already listening) in process from now on."""
    routes = _installed()
    if routes is None:
        routes = _install()
    routes.servers[server.port] = server


def detach(server: LoopbackServer) -> None:
    """Stop answering requests to ``server`` in process; the last one removes the patch."""
    routes = _installed()
    if routes is None:
        return
    routes.servers.pop(server.port, None)
    if not routes.servers:
        httpx.HTTPTransport.handle_request = routes.sync_original  # type: ignore[method-assign]
        httpx.AsyncHTTPTransport.handle_async_request = routes.async_original  # type: ignore[method-assign]


def _installed() -> _Routes | None:
    routes = getattr(httpx.HTTPTransport.handle_request, _MARK, None)
    return routes if isinstance(routes, _Routes) else None


def _install() -> _Routes:
    routes = _Routes(
        sync_original=httpx.HTTPTransport.handle_request,
        async_original=httpx.AsyncHTTPTransport.handle_async_request,
    )

    def handle_request(transport: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        server = routes.target(request.url)
        if server is None:
            return routes.sync_original(transport, request)
        return _answer(server, request)

    async def handle_async_request(
        transport: httpx.AsyncHTTPTransport, request: httpx.Request
    ) -> httpx.Response:
        server = routes.target(request.url)
        if server is None:
            response: httpx.Response = await routes.async_original(transport, request)
            return response
        return await _answer_async(server, request)

    setattr(handle_request, _MARK, routes)
    httpx.HTTPTransport.handle_request = handle_request  # type: ignore[method-assign,assignment]
    httpx.AsyncHTTPTransport.handle_async_request = handle_async_request  # type: ignore[method-assign,assignment]
    return routes


def _answer(server: LoopbackServer, request: httpx.Request) -> httpx.Response:
    """A sync client's request to ``server``: on this thread if it can be, else on the server's loop."""
    asked = _request(request, request.read())
    answer = server.respond_here(asked)
    if answer is not None:
        return _response(answer)
    future = server.submit(server.respond(asked))
    try:
        answer = future.result(timeout=_read_timeout(request))
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise httpx.ReadTimeout(_LATE, request=request) from None
    return _response(answer)


async def _answer_async(server: LoopbackServer, request: httpx.Request) -> httpx.Response:
    """An async client's request to ``server`` (from any event loop but the server's own)."""
    asked = _request(request, await request.aread())
    answer = server.respond_here(asked)
    if answer is not None:
        return _response(answer)
    future = asyncio.wrap_future(server.submit(server.respond(asked)))
    try:
        answer = await asyncio.wait_for(future, _read_timeout(request))
    except TimeoutError:
        raise httpx.ReadTimeout(_LATE, request=request) from None
    return _response(answer)


def _request(request: httpx.Request, body: bytes) -> HttpRequest:
    # Header names in lower case and repeats joined, as the socket's parser gives them.
    headers: dict[str, str] = {}
    for name, value in request.headers.multi_items():
        name = name.lower()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    target = request.url.raw_path.decode("ascii")
    return HttpRequest(request.method.upper(), target, headers, body)


def _response(answer: HttpResponse) -> httpx.Response:
    headers = [(name, value) for name, value in answer.headers.items() if name.lower() != "content-length"]
    return httpx.Response(answer.status, headers=headers, content=answer.body)


def _read_timeout(request: httpx.Request) -> float | None:
    timeout = request.extensions.get("timeout") or {}
    read = timeout.get("read") if isinstance(timeout, dict) else None
    return float(read) if isinstance(read, int | float) else None
