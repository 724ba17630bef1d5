"""Fetch a public text document over HTTP without letting a sample reach private networks.

Every hop of a fetch is validated before anything is sent (omk-semantics §4.4): http/https only,
no credentials, default ports, and *every* DNS answer public. The connection then goes to the
checked address itself: the request is sent to the IP with the original ``Host`` header and, for
https, the original name as SNI (so the certificate is still verified against that name). Nothing
resolves the name a second time, so a DNS-rebinding answer cannot slip in between check and
connect. Proxies from the environment are ignored for the same reason, and connections are never
kept alive, so a TLS session verified for one name is never reused for another on the same IP.

Hosts in the ini ``omk_url_allow_hosts`` list (names or IP addresses) are trusted destinations:
they skip the private-address block and may use any port. A name whose every address is an
allow-listed IP is trusted the same way. Credentials stay forbidden everywhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from urllib.parse import quote, urljoin

import httpx

from pytest_omk._util.bodies import read_capped
from pytest_omk.resolve.content import MAX_BODY_BYTES, FetchError, check_content_type, html_to_text
from pytest_omk.resolve.urls import ParsedUrl, parse_url

DnsResolver = Callable[[str], Awaitable[list[str]]]
"""``async (hostname) -> addresses``: every A and AAAA record of the name."""

MAX_REDIRECTS = 5
REQUEST_HEADERS = {
    "accept": "text/plain, text/markdown, text/html, application/json, application/xml;q=0.9",
    "accept-encoding": "identity",
    "user-agent": "oh-my-knowledge/sample-content-resolver",
}

__all__ = [
    "MAX_REDIRECTS",
    "REQUEST_HEADERS",
    "DnsResolver",
    "FetchError",
    "SafeHttpFetcher",
    "blocked_range",
    "system_dns",
]

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_BLOCKED_V4 = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
        "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    )
)  # fmt: skip
_BLOCKED_V6 = tuple(
    ipaddress.IPv6Network(n)
    for n in (
        "::/128", "::1/128", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "fc00::/7", "fe80::/10",
        "ff00::/8", "2001::/32", "2001:2::/48", "2001:db8::/32", "2001:10::/28", "2001:20::/28",
        "2002::/16", "3fff::/20",
        # Not in the format owner's list: deprecated IPv4-compatible addresses (::a.b.c.d). Some
        # stacks still route them to the embedded IPv4, so they are refused as a hardening.
        "::/96",
        # Also hardening (docs/security.md): IPv4-mapped (when not judged by the IPv4 inside),
        # IPv4-translated (SIIT), deprecated site-local, the discard-only prefix, 6bone, and ORCHID.
        "::ffff:0:0/96", "::ffff:0:0:0/96", "fec0::/10", "100::/8", "3ffe::/16", "5f00::/8",
    )
)  # fmt: skip


def blocked_range(address: IpAddress) -> str | None:
    """The blocked network containing ``address`` (IPv4-mapped judged by its IPv4), else ``None``."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network] = (
        _BLOCKED_V4 if isinstance(address, ipaddress.IPv4Address) else _BLOCKED_V6
    )
    return next((str(n) for n in networks if address in n), None)


async def system_dns(host: str) -> list[str]:
    """Every A/AAAA address of ``host`` from the system resolver."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    # Link-local answers may carry a zone ("fe80::1%eth0"); the address alone is what is judged.
    return sorted(
        {str(info[4][0]).split("%")[0] for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)}
    )


def _allow_entry(entry: str) -> str:
    entry = entry.strip().lower().rstrip(".")
    if entry.startswith("[") and entry.endswith("]"):
        entry = entry[1:-1]
    try:
        return str(ipaddress.ip_address(entry))
    except ValueError:
        return entry


class SafeHttpFetcher:
    """GETs text documents under the safe-HTTP rules; one instance serves a whole run."""

    def __init__(
        self,
        *,
        allow_hosts: Iterable[str] = (),
        dns: DnsResolver | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.allow_hosts = frozenset(_allow_entry(h) for h in allow_hosts if h.strip())
        self.timeout = timeout
        self._dns = dns or system_dns
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def fetch(self, url: str) -> str:
        """The decoded text at ``url`` (HTML reduced to text); :class:`FetchError` says why not."""
        try:
            async with asyncio.timeout(self.timeout):
                return await self._follow(url)
        except TimeoutError:
            raise FetchError(f"timed out after {self.timeout:g} s") from None
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, OSError) as exc:
            raise FetchError(f"HTTP transport error: {type(exc).__name__}: {exc}".rstrip(": ")) from None

    async def aclose(self) -> None:
        """Close the HTTP client (safe to call more than once)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def _follow(self, url: str) -> str:
        seen: set[str] = set()
        current = url
        for hop in range(MAX_REDIRECTS + 1):
            parsed = self._check_url(current)
            seen.add(parsed.href)
            address = await self._pin(parsed)
            request = self._http().build_request(
                "GET", _pinned_url(parsed, address), headers=_headers(parsed), extensions=_extensions(parsed)
            )
            async with _streamed(self._http(), request) as response:
                status = response.status_code
                if 300 <= status < 400:
                    location = response.headers.get("location")
                    if not location:
                        raise FetchError(
                            f"HTTP {status} redirect without a Location header from {parsed.href}"
                        )
                    current = _redirect_target(parsed.href, location)
                    if hop == MAX_REDIRECTS:
                        raise FetchError(f"more than {MAX_REDIRECTS} redirects (last to {current})")
                    if (target := parse_url(current)) is not None and target.href in seen:
                        raise FetchError(f"redirect loop back to {target.href}")
                    continue
                if not 200 <= status < 300:
                    raise FetchError(f"HTTP status {status} from {parsed.href}")
                return await _read_text(response)
        raise AssertionError("unreachable: the loop returns or raises")

    def _check_url(self, url: str) -> ParsedUrl:
        parsed = parse_url(url)
        if parsed is None:
            raise FetchError(f"{url} is not a valid http(s) URL")
        if parsed.has_credentials:
            raise FetchError(f"{url} carries credentials, which are never sent")
        return parsed

    def _trusted(self, parsed: ParsedUrl) -> bool:
        return parsed.hostname in self.allow_hosts or (
            parsed.ip is not None and str(parsed.ip) in self.allow_hosts
        )

    async def _pin(self, parsed: ParsedUrl) -> IpAddress:
        """Validate port and addresses of ``parsed``; return the one address to connect to."""
        trusted = self._trusted(parsed)
        port_note = f"port {parsed.port} is not allowed (only 80 for http and 443 for https; use MCP or omk_url_allow_hosts)"
        ip_entries = any(_is_ip(h) for h in self.allow_hosts)
        if parsed.port is not None and not trusted and not ip_entries:
            raise FetchError(f"{parsed.href}: {port_note}")  # refuse before any DNS traffic
        addresses = [parsed.ip] if parsed.ip is not None else await self._lookup(parsed.hostname)
        allowed = [trusted or str(a) in self.allow_hosts for a in addresses]
        for address, ok in zip(addresses, allowed, strict=True):
            network = None if ok else blocked_range(address)
            if network is not None:
                subject = "is" if parsed.ip is not None else f"resolves to {address}, which is"
                raise FetchError(
                    f"{parsed.href}: host {parsed.hostname} {subject} in the blocked range {network} "
                    "(private, loopback, link-local or reserved addresses are never fetched)"
                )
        if parsed.port is not None and not all(allowed):
            raise FetchError(f"{parsed.href}: {port_note}")
        # "Lowest" as the format owner pins it: IPv4 before IPv6, then by the text of the address.
        return min(addresses, key=lambda a: (a.version != 4, str(a)))

    async def _lookup(self, hostname: str) -> list[IpAddress]:
        try:
            answers = await self._dns(hostname)
        except (OSError, UnicodeError) as exc:
            raise FetchError(f"DNS lookup of {hostname} failed: {exc}") from None
        addresses: list[IpAddress] = []
        for answer in answers:
            try:
                addresses.append(ipaddress.ip_address(answer))
            except ValueError:
                raise FetchError(f"DNS lookup of {hostname} returned {answer!r}, not an address") from None
        if not addresses:
            raise FetchError(f"DNS lookup of {hostname} returned no address")
        return addresses

    def _http(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            # A client's connections belong to the loop that opened them: never share across loops.
            self._client = httpx.AsyncClient(
                transport=self._transport
                or httpx.AsyncHTTPTransport(limits=httpx.Limits(max_keepalive_connections=0), retries=0),
                timeout=httpx.Timeout(self.timeout),
                follow_redirects=False,
                trust_env=False,  # a proxy would resolve the name itself and undo the pinning
            )
            self._loop = loop
        return self._client


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _pinned_url(parsed: ParsedUrl, address: IpAddress) -> str:
    host = str(address) if address.version == 4 else f"[{address}]"
    return f"{parsed.scheme}://{host}:{parsed.effective_port}{parsed.target}"


def _headers(parsed: ParsedUrl) -> dict[str, str]:
    return {**REQUEST_HEADERS, "host": parsed.host if parsed.port is None else f"{parsed.host}:{parsed.port}"}


def _extensions(parsed: ParsedUrl) -> dict[str, str]:
    # SNI (and certificate verification) use the name, while the socket goes to the pinned IP.
    return {"sni_hostname": parsed.hostname} if parsed.scheme == "https" and parsed.ip is None else {}


@contextlib.asynccontextmanager
async def _streamed(client: httpx.AsyncClient, request: httpx.Request) -> AsyncIterator[httpx.Response]:
    response = await client.send(request, stream=True)
    try:
        yield response
    finally:
        await response.aclose()


def _too_large() -> FetchError:
    return FetchError(f"body exceeds the {MAX_BODY_BYTES}-byte limit")


def _redirect_target(base: str, location: str) -> str:
    # Location is latin-1 text off the wire: escape anything a URL may not contain, then resolve.
    return urljoin(base, quote(location.strip(), safe="!#$%&'()*+,/:;=?@[]~"))


async def _read_text(response: httpx.Response) -> str:
    media_type = check_content_type(response.headers.get("content-type"))
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        raise FetchError(f"Content-Encoding {encoding!r} is not accepted (only identity)")
    declared = response.headers.get("content-length")
    if declared is not None:
        if not declared.strip().isdigit():
            raise FetchError(f"invalid Content-Length {declared!r}")
        if int(declared) > MAX_BODY_BYTES:
            raise FetchError(f"Content-Length {int(declared)} exceeds the {MAX_BODY_BYTES}-byte limit")
    body = await read_capped(response.aiter_raw(), MAX_BODY_BYTES, _too_large)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FetchError(f"body is not valid UTF-8 (byte {exc.start})") from None
    if media_type in ("text/html", "application/xhtml+xml"):
        # Off the loop: a 1 MiB page takes a moment even in linear time, and other samples wait
        # for nothing; the fetch's own deadline still bounds the wait.
        return await asyncio.to_thread(html_to_text, text)
    return text
