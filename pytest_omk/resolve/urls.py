"""Find, normalize and inline the URLs of a sample's ``prompt`` and ``context`` (pure functions).

Detection follows the format owner's rules (omk-semantics §4.1): an ASCII-only pattern with a
case-insensitive scheme, trailing punctuation and unbalanced closing brackets stripped, userinfo
rejected before the placeholder test, fragments removed, RFC placeholder hosts left literal.

Parsing is "WHATWG-ish": the parts the fetch key and the safety checks depend on follow the WHATWG
URL standard (special-scheme slashes, percent-decoded hosts, the IPv4 number forms ``2130706433``,
``0x7f.1`` and ``017700000001``, compressed IPv6, default ports dropped, dot segments resolved,
``'`` escaped in the query), using :mod:`urllib.parse` only for percent-decoding. Deviations: a
host that percent-decodes to non-ASCII is converted with Python's IDNA 2003 codec rather than
UTS #46, and a URL the parser rejects (bad port, bad IP literal, forbidden host character) is left
literal, as the format owner does with anything ``new URL()`` refuses.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_omk.resolve.hosts import parse_host

MAX_URLS = 64
"""Distinct fetchable URLs allowed in one sample set."""
MAX_CONTENT_BYTES = 1024 * 1024
"""UTF-8 bytes allowed in one resolved content, after normalization."""
MAX_TOTAL_BYTES = 8 * 1024 * 1024
"""UTF-8 bytes allowed in all inlined contents of a sample set (content bytes × occurrences)."""

BEGIN_MARKER = "\n\n--- OMK resolved content ---\n"
END_MARKER = "\n--- end OMK resolved content ---"

# re.ASCII matters: with Unicode case folding, [A-Za-z] would also match 'ſ' and the Kelvin sign,
# which JavaScript's non-Unicode /i never does; any non-ASCII character must end the URL.
URL_PATTERN = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+", re.IGNORECASE | re.ASCII)
_TRAILING = re.compile(r"[.,;!?，。；！？、：]+$")
_CLOSERS = {")": "(", "]": "[", "}": "{"}

PLACEHOLDER_HOSTS = frozenset(
    {"example", "example.com", "example.net", "example.org", "invalid", "localhost", "test"}
)
PLACEHOLDER_SUFFIXES = (
    ".example.com",
    ".example.net",
    ".example.org",
    ".example",
    ".invalid",
    ".localhost",
    ".test",
)

_DEFAULT_PORTS = {"http": 80, "https": 443}
_SINGLE_DOT = frozenset({".", "%2e"})
_DOUBLE_DOT = frozenset({"..", ".%2e", "%2e.", "%2e%2e"})


class UrlError(ValueError):
    """A sample URL that must stop the run rather than be left literal (credentials)."""


@dataclass(frozen=True)
class ParsedUrl:
    """An http(s) URL after WHATWG-ish normalization."""

    href: str
    """The normalized URL without credentials or fragment: the fetch key."""
    scheme: str
    host: str
    """Serialized host: a lower-case domain, dotted IPv4, or bracketed compressed IPv6."""
    port: int | None
    """Explicit non-default port, else ``None``."""
    target: str
    """Path plus ``?query``: what goes on the request line."""
    has_credentials: bool = False

    @property
    def hostname(self) -> str:
        """The host without IPv6 brackets or a trailing dot, as DNS and placeholder tests see it."""
        return self.host[1:-1] if self.host.startswith("[") else self.host.rstrip(".")

    @property
    def effective_port(self) -> int:
        """The TCP port to connect to."""
        return self.port if self.port is not None else _DEFAULT_PORTS[self.scheme]

    @property
    def ip(self) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
        """The host as an address when it is an IP literal."""
        try:
            return ipaddress.ip_address(self.hostname)
        except ValueError:
            return None


@dataclass(frozen=True)
class UrlOccurrence:
    """One URL found in a text."""

    start: int
    end: int
    """``text[start:end]`` is ``raw``; the stripped ``trailing`` follows it."""
    raw: str
    trailing: str
    url: str | None
    """The fetch key, or ``None`` when the URL is left literal (placeholder host, unparseable)."""


def find_urls(text: str) -> list[UrlOccurrence]:
    """Every URL occurrence in ``text``, in order.

    Raises :class:`UrlError` for a URL carrying a username or password, placeholder or not.
    """
    found: list[UrlOccurrence] = []
    for match in URL_PATTERN.finditer(text):
        raw, trailing = strip_trailing(match.group())
        parsed = parse_url(raw)
        url: str | None = None
        if parsed is not None:
            if parsed.has_credentials:
                raise UrlError(f"Sample URL {raw} must not carry a username or password in its authority")
            if not is_placeholder_host(parsed.hostname):
                url = parsed.href
        found.append(UrlOccurrence(match.start(), match.start() + len(raw), raw, trailing, url))
    return found


def strip_trailing(matched: str) -> tuple[str, str]:
    """Split ``matched`` into the URL and the sentence punctuation after it."""
    raw = _TRAILING.sub("", matched)
    while raw and raw[-1] in _CLOSERS and raw.count(raw[-1]) > raw.count(_CLOSERS[raw[-1]]):
        raw = raw[:-1]
    return raw, matched[len(raw) :]


def url_counts(texts: Iterable[str | None]) -> dict[str, int]:
    """How often each fetch key occurs in ``texts``, in first-seen order (placeholders excluded)."""
    counts: dict[str, int] = {}
    for text in texts:
        for occurrence in find_urls(text or ""):
            if occurrence.url is not None:
                counts[occurrence.url] = counts.get(occurrence.url, 0) + 1
    return counts


def is_placeholder_host(hostname: str) -> bool:
    """Whether ``hostname`` is an RFC 2606/6761 name that is never fetched."""
    host = hostname.lower().rstrip(".")
    return host in PLACEHOLDER_HOSTS or host.endswith(PLACEHOLDER_SUFFIXES)


def parse_url(raw: str) -> ParsedUrl | None:
    """Normalize an http(s) URL; ``None`` when it is not one a browser would accept."""
    scheme, sep, rest = raw.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in _DEFAULT_PORTS:
        return None
    rest = rest.split("#", 1)[0]
    # Special schemes ignore any number of slashes before the authority ("http:///host").
    rest = rest.lstrip("/")
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    userinfo, at, hostport = authority.rpartition("@")
    has_credentials = bool(at) and userinfo not in ("", ":")
    split = _split_hostport(hostport)
    if split is None:
        return None
    host_text, port_text = split
    host = parse_host(host_text)
    if host is None:
        return None
    port: int | None = None
    if port_text:
        if not port_text.isdigit() or int(port_text) > 65535:
            return None
        port = None if int(port_text) == _DEFAULT_PORTS[scheme] else int(port_text)
    path, qmark, query = tail.partition("?")
    target = _normalize_path(path) + (qmark + query.replace("'", "%27") if qmark else "")
    authority_out = host if port is None else f"{host}:{port}"
    return ParsedUrl(f"{scheme}://{authority_out}{target}", scheme, host, port, target, has_credentials)


def _split_hostport(hostport: str) -> tuple[str, str] | None:
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0:
            return None
        host, after = hostport[: close + 1], hostport[close + 1 :]
        if after and not after.startswith(":"):
            return None
        return host, after[1:]
    host, _, port = hostport.partition(":")
    return host, port


def _normalize_path(path: str) -> str:
    """Resolve ``.`` and ``..`` segments (including their ``%2e`` spellings); empty → ``/``."""
    segments = path[1:].split("/") if path else [""]
    out: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        lowered = segment.lower()
        if lowered in _DOUBLE_DOT:
            if out:
                out.pop()
            if last:
                out.append("")
        elif lowered in _SINGLE_DOT:
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)


def normalize_content(text: str) -> str:
    """Strip a leading BOM, turn CRLF/CR into LF, trim; an empty result or > 1 MiB is an error."""
    content = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").strip()
    if not content:
        raise ValueError("the resolved content is empty")
    size = len(content.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise ValueError(f"the resolved content is {size} bytes, over the {MAX_CONTENT_BYTES}-byte limit")
    return content


def inline(text: str, contents: Mapping[str, str]) -> str:
    """``text`` with every occurrence of a resolved URL followed by its marked-up content."""
    pieces: list[str] = []
    position = 0
    for occurrence in find_urls(text):
        if occurrence.url is None or occurrence.url not in contents:
            continue
        pieces.append(text[position : occurrence.end])
        pieces.append(f"{BEGIN_MARKER}{contents[occurrence.url]}{END_MARKER}")
        position = occurrence.end  # the trailing punctuation follows the end marker
    pieces.append(text[position:])
    return "".join(pieces)
