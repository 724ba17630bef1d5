"""Who may use the model gateway: the run that made it, over the gateway's own loopback address.

Any process on the machine can reach a loopback port (another user's, a test of untrusted code in
the same job, a web page in a browser through DNS rebinding or a cross-site form), and the gateway
forwards calls with the run's credentials and writes recordings. So every request is judged by its
head, before its body is read (over the socket and in process alike):

- its path starts with the process's secret (192 random bits, in the base URL the app is given and
  nowhere else), then ``_`` (the process's shared route) or an open run's random token;
- its ``Host`` is ``127.0.0.1:<port>`` or ``localhost:<port>`` (another name is DNS rebinding);
- it carries no ``Origin`` and no cross-site ``Sec-Fetch-Site`` (a browser's request);
- a request with a body says it is JSON (a browser's form or ``text/plain`` post is not).

A refusal says which rule, never the secret; a refused request reaches no run, no recording and no
provider. No pytest here.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from pytest_omk.app.messages import HttpRequest, HttpResponse

SHARED_ROUTE = "_"
"""The run part of the process's shared base URL (an in-process app's calls)."""
_BROWSER_SITES = ("cross-site", "same-site")


@dataclass(frozen=True)
class Route:
    """What a request's path names below the secret: the run, the API and the provider's path."""

    run: str
    api: str
    rest: str


def new_secret() -> str:
    """The per-process secret of a gateway's routes."""
    return secrets.token_urlsafe(24)


def route_of(target: str, secret: str) -> Route | None:
    """The route of ``target`` (``/<secret>/<run>/<api>/<path>``), ``None`` without the secret."""
    parts = target.partition("?")[0].split("/", 4)
    if len(parts) < 4 or parts[0] != "":
        return None
    if not hmac.compare_digest(parts[1].encode(), secret.encode()):
        return None
    return Route(parts[2], parts[3], "/" + (parts[4] if len(parts) > 4 else ""))


class Admission:
    """The gateway's guard: refuses every request not from the run that made the gateway."""

    def __init__(self, secret: str, port: Callable[[], int], is_open: Callable[[str], bool]) -> None:
        self._secret = secret
        self._port = port
        self._is_open = is_open

    def refusal(self, request: HttpRequest) -> HttpResponse | None:
        """The answer refusing ``request`` (its head is enough), or ``None`` to serve it."""
        headers = request.headers
        port = self._port()
        if headers.get("host", "").lower() not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return error(403, "pytest-omk's model gateway answers only at its own loopback address")
        if "origin" in headers or headers.get("sec-fetch-site", "").lower() in _BROWSER_SITES:
            return error(403, "pytest-omk's model gateway refuses requests from web pages")
        route = route_of(request.target, self._secret)
        if route is None:
            return error(403, "pytest-omk's model gateway answers only the run that started it")
        if route.run != SHARED_ROUTE and not self._is_open(route.run):
            return error(403, "pytest-omk's model gateway has no open sample run of that address")
        if _has_body(request) and not _is_json(headers.get("content-type", "")):
            return error(415, "pytest-omk's model gateway takes JSON requests only (content-type)")
        return None


def _has_body(request: HttpRequest) -> bool:
    headers = request.headers
    return bool(request.body) or "transfer-encoding" in headers or headers.get("content-length", "0") != "0"


def _is_json(content_type: str) -> bool:
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def error(status: int, message: str) -> HttpResponse:
    """An error body both SDKs read (``error.message``); ``x-should-retry: false`` stops their retries."""
    body = json.dumps({"error": {"message": message, "type": "pytest_omk_gateway"}}).encode()
    return HttpResponse(status, body, {"content-type": "application/json", "x-should-retry": "false"})
