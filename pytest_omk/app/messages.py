"""What the gateway's HTTP server reads and writes: a request, an answer, and the limits it keeps.

Plain data shared by the listener (:mod:`pytest_omk.app.server`), its connections
(:mod:`pytest_omk.app.connection`) and the clients in this process
(:mod:`pytest_omk.app.in_process`). No pytest here.
"""

from __future__ import annotations

import re
import resource
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
"""Largest request body read (an image or audio upload fits; more is refused with 413)."""
_UNSAFE_HEADER = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
"""Controls (CR and LF among them) that may never reach a header the server writes; a tab may."""
_USERINFO = re.compile(r"//[^/?#@\s]*@")


@dataclass(frozen=True)
class HttpRequest:
    """One request as a client sent it (header names in lower case)."""

    method: str
    target: str
    """The path and query (``/<secret>/_/openai/v1/chat/completions?x=1``)."""
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class HttpResponse:
    """What the handler answers; ``content-length`` and ``connection`` are added when sent."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]
Quick = Callable[[HttpRequest], HttpResponse | None]
"""An answer made on the caller's thread (a replay), or ``None`` to leave the call to the loop."""
Guard = Callable[[HttpRequest], HttpResponse | None]
"""The refusal of a request seen by its head alone (its body empty, not read yet), or ``None``."""


def default_connections() -> int:
    """The cap on open connections: a quarter of this process's descriptor limit, at most 256, so a
    flood of connections can never take the descriptors pytest needs for its files and reports."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 256 if soft == resource.RLIM_INFINITY else max(8, min(256, soft // 4))


@dataclass(frozen=True)
class Limits:
    """What one client may hold of the server: connections and how long each phase may take."""

    connections: int = field(default_factory=default_connections)
    head_seconds: float = 10.0
    """From a new connection to the end of its first request's head."""
    body_seconds: float = 60.0
    """From the end of a head to the end of its body."""
    idle_seconds: float = 60.0
    """From an answer to the end of the next request's head on a kept-alive connection."""


def without_userinfo(text: str) -> str:
    """``text`` with the ``user:password@`` of every URL in it taken out."""
    return _USERINFO.sub("//", text)


def unsafe_headers(headers: dict[str, str]) -> list[str]:
    """The names of headers whose name or value holds a control character or is not Latin-1 (never
    written)."""
    return [
        name
        for name, value in headers.items()
        if _UNSAFE_HEADER.search(f"{name}{value}")
        or (not f"{name}{value}".isascii() and _not_latin1(name + value))
    ]


def _not_latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return True
    return False


def written(response: HttpResponse) -> HttpResponse:
    """``response`` as it may be written: a header holding CR, LF or another control character
    (a recording's content type, say) would split the answer, so it is refused with a 500."""
    bad = unsafe_headers(response.headers)
    if not bad:
        return response
    message = f"pytest-omk refused to write the header {bad[0]!r}: it holds a control character"
    return HttpResponse(500, message.encode(), {"content-type": "text/plain; charset=utf-8"})
