"""The SSRF-safe fetcher: a hostile-URL battery, pinning, and positive fetches from a loopback server.

No test touches the internet. DNS is always a stub. Cases refused before any request run against a
transport that fails the test if it is ever called; the rest run against a real HTTP server on
127.0.0.1, reached through the allow-listed name ``loop.fixture.dev`` (the stub maps it to
127.0.0.1, which is itself *not* allow-listed, so redirects to loopback literals stay blocked).
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest

from pytest_omk.resolve.content import check_content_type, html_to_text
from pytest_omk.resolve.safe_http import REQUEST_HEADERS, FetchError, SafeHttpFetcher, blocked_range
from tests.fakes.doc_server import DocServer, Page, endless, trickle
from tests.support.dns import LOOP, StubDns

PUBLIC = "93.184.216.34"  # a public address no test ever connects to
MiB = 1_048_576


def run(coro: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await coro

    return asyncio.run(main())


def fetch(fetcher: SafeHttpFetcher, url: str) -> str:
    async def go() -> str:
        try:
            return await fetcher.fetch(url)
        finally:
            await fetcher.aclose()

    text: str = run(go())
    return text


def refusing_transport() -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"nothing may be requested, but {request.url} was")

    return httpx.MockTransport(handler)


@pytest.fixture(scope="module")
def server() -> Iterator[DocServer]:
    with DocServer() as doc_server:
        yield doc_server


@pytest.fixture
def loop_fetcher(server: DocServer) -> Callable[..., SafeHttpFetcher]:
    def make(**table: Any) -> SafeHttpFetcher:
        dns = StubDns({LOOP: ["127.0.0.1"], **{k.replace("_", "."): v for k, v in table.items()}})
        return SafeHttpFetcher(allow_hosts={LOOP}, dns=dns, timeout=2.0)

    return make


# -- refused before any request -----------------------------------------------------------------

PRE_FLIGHT = [
    ("http://127.0.0.1/", "127.0.0.0/8"),
    ("http://127.1/", "127.0.0.0/8"),
    ("http://2130706433/", "127.0.0.0/8"),
    ("http://0x7f.1/", "127.0.0.0/8"),
    ("http://017700000001/", "127.0.0.0/8"),
    ("http://0x7f000001/", "127.0.0.0/8"),
    ("http://0177.0.0.1/", "127.0.0.0/8"),
    ("http://%31%32%37.0.0.1/", "127.0.0.0/8"),
    ("http://127.0.0.1./", "127.0.0.0/8"),
    ("https://127.0.0.1/", "127.0.0.0/8"),
    ("http://10.0.0.1/", "10.0.0.0/8"),
    ("http://172.16.5.4/", "172.16.0.0/12"),
    ("http://192.168.0.1/", "192.168.0.0/16"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.0.0/16"),
    ("http://100.64.0.1/", "100.64.0.0/10"),
    ("http://0.0.0.0/", "0.0.0.0/8"),
    ("http://0/", "0.0.0.0/8"),
    ("http://198.18.0.1/", "198.18.0.0/15"),
    ("http://192.0.2.1/", "192.0.2.0/24"),
    ("http://224.0.0.1/", "224.0.0.0/4"),
    ("http://255.255.255.255/", "240.0.0.0/4"),
    ("http://[::1]/", "::1/128"),
    ("http://[::]/", "::/128"),
    ("http://[::ffff:127.0.0.1]/", "127.0.0.0/8"),
    ("http://[::ffff:a00:1]/", "10.0.0.0/8"),
    ("http://[fe80::1]/", "fe80::/10"),
    ("http://[fc00::1]/", "fc00::/7"),
    ("http://[fd12:3456::1]/", "fc00::/7"),
    ("http://[ff02::1]/", "ff00::/8"),
    ("http://[64:ff9b::7f00:1]/", "64:ff9b::/96"),
    ("http://[2002:7f00:1::]/", "2002::/16"),
    ("http://[2001:db8::1]/", "2001:db8::/32"),
    ("http://[::127.0.0.1]/", "::/96"),
    ("http://rebind.fixture.dev/", "resolves to 127.0.0.1"),
    ("http://internal.fixture.dev/", "resolves to 10.1.2.3"),
    ("http://v6.fixture.dev/", "resolves to ::1"),
    ("http://mapped.fixture.dev/", "resolves to ::ffff:c0a8:101"),
    ("http://linklocal.fixture.dev/", "fe80::/10"),
    ("http://nothing.fixture.dev/", "returned no address"),
    ("http://unknown.fixture.dev/", "DNS lookup of unknown.fixture.dev failed"),
    ("http://garbage.fixture.dev/", "not an address"),
    ("http://localhost/", "resolves to 127.0.0.1"),
    ("http://user:pw@93.184.216.34/", "carries credentials"),
    ("http://user@public.fixture.dev/", "carries credentials"),
    (f"http://{PUBLIC}:8080/", "port 8080 is not allowed"),
    ("http://public.fixture.dev:22/", "port 22 is not allowed"),
    (f"https://{PUBLIC}:80/", "port 80 is not allowed"),
    (f"http://{PUBLIC}:443/", "port 443 is not allowed"),
    ("ftp://public.fixture.dev/", "not a valid http(s) URL"),
    ("http://1.2.3.256/", "not a valid http(s) URL"),
]
HOSTILE_DNS = {
    "rebind.fixture.dev": [PUBLIC, "127.0.0.1"],
    "internal.fixture.dev": ["10.1.2.3"],
    "v6.fixture.dev": ["2606:4700::1111", "::1"],
    "mapped.fixture.dev": ["::ffff:192.168.1.1"],
    "linklocal.fixture.dev": ["fe80::1%eth0"],
    "nothing.fixture.dev": [],
    "garbage.fixture.dev": ["not-an-ip"],
    "localhost": ["127.0.0.1"],
    "public.fixture.dev": [PUBLIC],
}


@pytest.mark.parametrize(("url", "reason"), PRE_FLIGHT, ids=[u for u, _ in PRE_FLIGHT])
def test_hostile_url_is_refused_before_any_request(url: str, reason: str) -> None:
    fetcher = SafeHttpFetcher(dns=StubDns(HOSTILE_DNS), transport=refusing_transport(), timeout=2.0)
    with pytest.raises(FetchError) as caught:
        fetch(fetcher, url)
    assert reason in str(caught.value)


def test_allow_listing_a_name_does_not_allow_credentials_or_other_names() -> None:
    fetcher = SafeHttpFetcher(
        allow_hosts={"intranet.corp"}, dns=StubDns(HOSTILE_DNS), transport=refusing_transport()
    )
    with pytest.raises(FetchError, match="credentials"):
        fetch(fetcher, "http://u:p@intranet.corp/")
    with pytest.raises(FetchError, match=r"10\.0\.0\.0/8"):
        fetch(fetcher, "http://internal.fixture.dev/")


def test_non_default_port_is_refused_without_a_dns_lookup() -> None:
    dns = StubDns(HOSTILE_DNS)
    with pytest.raises(FetchError, match="port 8443"):
        fetch(SafeHttpFetcher(dns=dns, transport=refusing_transport()), "https://public.fixture.dev:8443/")
    assert dns.lookups == []


@pytest.mark.parametrize(
    ("address", "blocked"),
    [("8.8.8.8", None), ("2606:4700::1111", None), ("::ffff:8.8.8.8", None), ("172.32.0.1", None),
     ("172.31.255.255", "172.16.0.0/12"), ("3fff::1", "3fff::/20"), ("2001:10::1", "2001:10::/28")],
)  # fmt: skip
def test_blocked_range_table(address: str, blocked: str | None) -> None:
    assert blocked_range(ipaddress.ip_address(address)) == blocked


# -- refused while or after talking to the (loopback) server -------------------------------------


def _setup_hostile_pages(server: DocServer) -> None:
    port = server.port
    server.redirect("/to-loopback-literal", "http://127.0.0.1/ok")
    server.redirect("/to-loopback-port", f"http://127.0.0.1:{port}/ok")
    server.redirect("/to-private", "http://10.0.0.1/ok")
    server.redirect("/to-v6-loopback", "http://[::1]/ok")
    server.redirect("/to-decimal-loopback", "http://2130706433/ok")
    server.redirect("/to-private-name", "http://private.fixture.dev/ok")
    server.redirect("/to-credentials", f"http://u:p@{LOOP}:{port}/ok")
    server.redirect("/to-ftp", "ftp://files.fixture.dev/x")
    server.redirect("/to-file", "file:///etc/passwd")
    server.redirect("/to-metadata", "http://169.254.169.254/latest/meta-data/")
    server.redirect("/to-odd-port", f"http://{PUBLIC}:8080/")
    server.redirect("/loop-a", "/loop-b")
    server.redirect("/loop-b", "/loop-a", status=301)
    for hop in range(9):
        server.redirect(f"/hop/{hop}", f"/hop/{hop + 1}", status=307)
    server.pages["/no-location"] = Page(status=302, headers={"Content-Length": "0"})
    server.pages["/binary"] = Page(b"\x00\x01\x02", headers={"Content-Type": "application/octet-stream"})
    server.pages["/png"] = Page(b"\x89PNG\r\n", headers={"Content-Type": "image/png"})
    server.pages["/latin1-declared"] = Page(
        "café".encode("latin-1"), headers={"Content-Type": "text/plain; charset=iso-8859-1"}
    )
    server.pages["/latin1-undeclared"] = Page(
        "café".encode("latin-1"), headers={"Content-Type": "text/plain"}
    )
    server.pages["/utf16"] = Page(
        "hi".encode("utf-16"), headers={"Content-Type": "text/plain; charset=utf-16"}
    )
    server.pages["/no-type"] = Page(b"hello", headers={})
    server.pages["/big-declared"] = Page(
        b"small", headers={"Content-Type": "text/plain", "Content-Length": str(2 * MiB)}
    )
    server.pages["/endless"] = Page(endless(), headers={"Content-Type": "text/plain"})
    server.pages["/one-byte-over"] = Page(b"a" * (MiB + 1), headers={"Content-Type": "text/plain"})
    server.pages["/slow-body"] = Page(trickle(100, 0.05), headers={"Content-Type": "text/plain"})
    server.pages["/slow-headers"] = Page(b"late", delay=3.0)
    server.pages["/gzip"] = Page(
        b"\x1f\x8b\x08", headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"}
    )
    server.pages["/br"] = Page(b"x", headers={"Content-Type": "text/plain", "Content-Encoding": "br"})
    server.pages["/not-found"] = Page(b"gone", status=404)
    server.pages["/server-error"] = Page(b"oops", status=500)


SERVED_HOSTILE = [
    ("/to-loopback-literal", "127.0.0.0/8"),
    ("/to-loopback-port", "is not allowed"),
    ("/to-decimal-loopback", "127.0.0.0/8"),
    ("/to-private", "10.0.0.0/8"),
    ("/to-v6-loopback", "::1/128"),
    ("/to-private-name", "resolves to 192.168.7.7"),
    ("/to-credentials", "carries credentials"),
    ("/to-ftp", "not a valid http(s) URL"),
    ("/to-file", "not a valid http(s) URL"),
    ("/to-metadata", "169.254.0.0/16"),
    ("/to-odd-port", "port 8080 is not allowed"),
    ("/loop-a", "redirect loop"),
    ("/hop/0", "more than 5 redirects"),
    ("/no-location", "redirect without a Location header"),
    ("/binary", "media type 'application/octet-stream'"),
    ("/png", "media type 'image/png'"),
    ("/latin1-declared", "charset 'iso-8859-1'"),
    ("/latin1-undeclared", "not valid UTF-8"),
    ("/utf16", "charset 'utf-16'"),
    ("/no-type", "no Content-Type"),
    ("/big-declared", "Content-Length 2097152 exceeds"),
    ("/endless", "body exceeds the 1048576-byte limit"),
    ("/one-byte-over", "body exceeds the 1048576-byte limit"),
    ("/slow-body", "timed out after 0.4 s"),
    ("/slow-headers", "timed out after 0.4 s"),
    ("/gzip", "Content-Encoding 'gzip'"),
    ("/br", "Content-Encoding 'br'"),
    ("/not-found", "HTTP status 404"),
    ("/server-error", "HTTP status 500"),
]


@pytest.mark.parametrize(("path", "reason"), SERVED_HOSTILE, ids=[p for p, _ in SERVED_HOSTILE])
def test_hostile_answer_is_refused(server: DocServer, path: str, reason: str) -> None:
    _setup_hostile_pages(server)
    dns = StubDns({LOOP: ["127.0.0.1"], "private.fixture.dev": ["192.168.7.7"]})
    # Only the slow pages are meant to hit the timeout; the others get a generous one, so a loaded
    # machine (redirect chains, a 1 MiB body) cannot turn their refusal into a timeout.
    slow = path in ("/slow-body", "/slow-headers")
    fetcher = SafeHttpFetcher(allow_hosts={LOOP}, dns=dns, timeout=0.4 if slow else 10.0)
    before = len(server.hits)
    with pytest.raises(FetchError) as caught:
        fetch(fetcher, f"http://{LOOP}:{server.port}{path}")
    assert reason in str(caught.value)
    # Nothing outside the allow-listed loopback name was ever contacted.
    assert all(hit.host == f"{LOOP}:{server.port}" for hit in server.hits[before:])


def test_redirect_hops_are_counted(server: DocServer) -> None:
    _setup_hostile_pages(server)
    server.redirect("/five/0", "/five/1")
    for hop in range(1, 5):
        server.redirect(f"/five/{hop}", f"/five/{hop + 1}")
    server.redirect("/five/5", "/ok")  # hop 5 exists but it is the sixth redirect
    server.text("/ok", "done")
    server.hits.clear()
    fetcher = SafeHttpFetcher(allow_hosts={LOOP}, dns=StubDns({LOOP: ["127.0.0.1"]}), timeout=2.0)
    with pytest.raises(FetchError, match="more than 5 redirects"):
        fetch(fetcher, f"http://{LOOP}:{server.port}/five/0")
    assert server.paths() == [f"/five/{i}" for i in range(6)]  # never /ok
    assert fetch(fetcher, f"http://{LOOP}:{server.port}/five/1") == "done"  # exactly five is fine


# -- positive cases and pinning --------------------------------------------------------------------


def test_fetches_text_with_the_documented_request_headers(server: DocServer) -> None:
    server.text("/doc", "hello from loopback")
    server.hits.clear()
    fetcher = SafeHttpFetcher(allow_hosts={LOOP}, dns=StubDns({LOOP: ["127.0.0.1"]}), timeout=2.0)
    assert fetch(fetcher, f"http://{LOOP}:{server.port}/doc") == "hello from loopback"
    (hit,) = server.hits
    assert hit.host == f"{LOOP}:{server.port}"
    headers = {k.lower(): v for k, v in hit.headers.items()}
    for name, value in REQUEST_HEADERS.items():
        assert headers[name] == value


def test_connection_goes_to_the_checked_address_not_a_new_lookup(server: DocServer) -> None:
    """Pinning, proved on loopback.

    ``docs.fixture.dev`` is not allow-listed and exists only in the stub, so only the pinned IP
    can reach the server. Both answers are allow-listed *addresses*, and the server listens on
    127.0.0.1 alone: the fetch works only if the lowest address (127.0.0.1, not 127.0.0.2) is the
    one connected to. The rebinding stub answers 10.0.0.1 from its second lookup on; there is
    none, because nothing resolves the name again after the check.
    """
    server.text("/pinned", "pinned content")
    server.hits.clear()
    dns = StubDns({"docs.fixture.dev": [["127.0.0.2", "127.0.0.1"], ["10.0.0.1"]]})
    fetcher = SafeHttpFetcher(allow_hosts={"127.0.0.1", "127.0.0.2"}, dns=dns, timeout=2.0)
    assert fetch(fetcher, f"http://docs.fixture.dev:{server.port}/pinned") == "pinned content"
    assert dns.lookups == ["docs.fixture.dev"]
    assert [hit.host for hit in server.hits] == [f"docs.fixture.dev:{server.port}"]
    # The next lookup answers the rebinding address, which is checked and refused.
    with pytest.raises(FetchError, match=r"resolves to 10\.0\.0\.1"):
        fetch(fetcher, f"http://docs.fixture.dev:{server.port}/pinned")


def test_connection_uses_the_stub_answer_even_when_it_does_not_listen(server: DocServer) -> None:
    dns = StubDns({"docs.fixture.dev": ["127.0.0.2"]})
    fetcher = SafeHttpFetcher(allow_hosts={"127.0.0.2"}, dns=dns, timeout=2.0)
    with pytest.raises(FetchError, match="ConnectError"):
        fetch(fetcher, f"http://docs.fixture.dev:{server.port}/pinned")


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_public_address_is_pinned_with_host_header_and_sni(scheme: str) -> None:
    """With a public answer, the request goes to that IP; Host and SNI keep the name."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200, headers={"content-type": "text/plain"}, stream=httpx.ByteStream(b"public doc")
        )

    dns = StubDns({"docs.fixture.dev": ["2606:4700::1111", PUBLIC, "104.16.0.1"]})
    fetcher = SafeHttpFetcher(dns=dns, transport=httpx.MockTransport(handler))
    assert fetch(fetcher, f"{scheme}://docs.fixture.dev/guide?x=1") == "public doc"
    (request,) = seen
    assert request.url.host == "104.16.0.1"  # lowest: IPv4 first, then by text
    assert request.url.raw_path == b"/guide?x=1"
    assert request.headers["host"] == "docs.fixture.dev"
    assert request.extensions.get("sni_hostname") == ("docs.fixture.dev" if scheme == "https" else None)


def test_follows_relative_and_absolute_redirects(server: DocServer) -> None:
    server.text("/final", "arrived")
    server.redirect("/start", "middle")
    server.redirect("/middle", f"http://{LOOP}:{server.port}/final", status=308)
    server.hits.clear()
    fetcher = SafeHttpFetcher(allow_hosts={LOOP}, dns=StubDns({LOOP: ["127.0.0.1"]}), timeout=2.0)
    assert fetch(fetcher, f"http://{LOOP}:{server.port}/start") == "arrived"
    assert server.paths() == ["/start", "/middle", "/final"]


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("text/markdown; charset=UTF-8", "# Title", "# Title"),
        ("text/plain; charset=us-ascii", "ascii", "ascii"),
        ('text/plain; charset="utf8"', "quoted", "quoted"),
        ("application/json", '{"a": 1}', '{"a": 1}'),
        ("application/vnd.api+json", "{}", "{}"),
        ("application/atom+xml", "<feed/>", "<feed/>"),
        ("application/x-yaml", "a: 1", "a: 1"),
        ("TEXT/HTML; charset=utf-8", "<h1>T</h1><p>a &amp; b</p>", "T\n a & b"),
        ("application/xhtml+xml", "<p>x</p><br/>y", "x\n\ny"),
    ],
)
def test_accepted_documents(server: DocServer, content_type: str, body: str, expected: str) -> None:
    server.text("/typed", body, content_type)
    fetcher = SafeHttpFetcher(allow_hosts={LOOP}, dns=StubDns({LOOP: ["127.0.0.1"]}), timeout=2.0)
    assert fetch(fetcher, f"http://{LOOP}:{server.port}/typed") == expected


def test_exactly_the_size_limit_is_accepted(server: DocServer) -> None:
    server.pages["/exact"] = Page(
        b"a" * MiB, headers={"Content-Type": "text/plain", "Content-Length": str(MiB)}
    )
    fetcher = SafeHttpFetcher(allow_hosts={LOOP}, dns=StubDns({LOOP: ["127.0.0.1"]}), timeout=2.0)
    assert len(fetch(fetcher, f"http://{LOOP}:{server.port}/exact")) == MiB


def test_html_to_text_follows_the_documented_steps() -> None:
    html = (
        "<html><head><style>p{}</style><SCRIPT type=x>alert(1)</script></head>"
        "<body><h2>Title</h2>\t\t<div>one  &NBSP;two</div><br>line<ul><li>a</li><li>b</li></ul>"
        "<p>&lt;tag&gt; &quot;q&quot; &#39;s&#x27; &amp;lt;</p>\n\n\n\n</body></html>"
    )
    assert html_to_text(html) == "Title\n one two\n\nline a\n b\n <tag> \"q\" 's' <"


@pytest.mark.parametrize(
    ("value", "reason"),
    [(None, "no Content-Type"), ("", "no Content-Type"), ("text/", "media type"), ("application/pdf", "media type"),
     ("text/plain; charset=latin1", "charset 'latin1'"), ("multipart/form-data", "media type")],
)  # fmt: skip
def test_content_type_refusals(value: str | None, reason: str) -> None:
    with pytest.raises(FetchError, match=reason):
        check_content_type(value)
