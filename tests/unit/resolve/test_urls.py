"""URL detection, normalization, placeholders, inlining and content limits (omk-semantics §4.1, §4.3)."""

from __future__ import annotations

import pytest

from pytest_omk.resolve.urls import (
    BEGIN_MARKER,
    END_MARKER,
    MAX_CONTENT_BYTES,
    MAX_TOTAL_BYTES,
    MAX_URLS,
    UrlError,
    find_urls,
    inline,
    is_placeholder_host,
    normalize_content,
    parse_url,
    strip_trailing,
    url_counts,
)


def keys(text: str) -> list[str | None]:
    return [o.url for o in find_urls(text)]


def raws(text: str) -> list[tuple[str, str]]:
    return [(o.raw, o.trailing) for o in find_urls(text)]


# -- detection ------------------------------------------------------------------------------------


def test_limits_are_the_format_owners() -> None:
    assert (MAX_URLS, MAX_CONTENT_BYTES, MAX_TOTAL_BYTES) == (64, 1_048_576, 8_388_608)


def test_finds_every_url_in_order_with_positions() -> None:
    text = "Read https://docs.python.org/3/ and http://www.rfc-editor.org/rfc/rfc3986 now"
    found = find_urls(text)
    assert [o.url for o in found] == ["https://docs.python.org/3/", "http://www.rfc-editor.org/rfc/rfc3986"]
    assert [text[o.start : o.end] for o in found] == [o.raw for o in found]


def test_scheme_is_case_insensitive_and_normalized() -> None:
    assert keys("see HTTPS://Docs.Python.ORG/Path") == ["https://docs.python.org/Path"]
    assert keys("HtTp://a.dev") == ["http://a.dev/"]


def test_other_schemes_are_not_detected() -> None:
    assert keys("ftp://files.dev/x file:///etc/passwd mailto:a@b.dev ws://a.dev") == []


@pytest.mark.parametrize(
    ("text", "raw"),
    [
        ("https://a.dev/路径", "https://a.dev/"),
        ("https://a.dev/x。next", "https://a.dev/x"),
        ("https://a.dev/\u212aelvin", "https://a.dev/"),  # Kelvin sign folds to 'k' in Unicode /i
        ("https://a.dev/\u017fx", "https://a.dev/"),  # long s folds to 's'
        ("https://a.dev/x y", "https://a.dev/x"),
        ('"https://a.dev/q"', "https://a.dev/q"),
        ("<https://a.dev/q>", "https://a.dev/q"),
    ],
)
def test_non_ascii_and_unlisted_characters_end_a_url(text: str, raw: str) -> None:
    assert raws(text)[0][0] == raw


@pytest.mark.parametrize(
    ("matched", "raw", "trailing"),
    [
        ("https://a.dev/x.", "https://a.dev/x", "."),
        ("https://a.dev/x...", "https://a.dev/x", "..."),
        ("https://a.dev/x,;!?", "https://a.dev/x", ",;!?"),
        ("https://a.dev/x，。；！？、：", "https://a.dev/x", "，。；！？、："),
        ("https://a.dev/x)", "https://a.dev/x", ")"),
        ("https://a.dev/x))]", "https://a.dev/x", "))]"),
        ("https://en.wikipedia.org/wiki/Foo_(bar)", "https://en.wikipedia.org/wiki/Foo_(bar)", ""),
        ("https://en.wikipedia.org/wiki/Foo_(bar))", "https://en.wikipedia.org/wiki/Foo_(bar)", ")"),
        ("https://a.dev/x]", "https://a.dev/x", "]"),
        ("https://a.dev/x}", "https://a.dev/x", "}"),
        # Punctuation is stripped first, closers second: a dot before ")" stays in the URL.
        ("https://a.dev/x.)", "https://a.dev/x.", ")"),
        ("https://a.dev/x).", "https://a.dev/x", ")."),
    ],
)
def test_trailing_punctuation_and_unbalanced_closers_are_stripped(
    matched: str, raw: str, trailing: str
) -> None:
    assert strip_trailing(matched) == (raw, trailing)


def test_markdown_link_and_parenthesised_url() -> None:
    assert raws("[docs](https://a.dev/guide) and (see https://b.dev/x).") == [
        ("https://a.dev/guide", ")"),
        ("https://b.dev/x", ")."),
    ]


def test_bare_scheme_is_not_a_url() -> None:
    assert keys("http://. and https://,") == [None, None]


# -- normalization ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "href"),
    [
        ("https://a.dev", "https://a.dev/"),
        ("https://a.dev#top", "https://a.dev/"),
        ("https://a.dev/p?q=1#frag", "https://a.dev/p?q=1"),
        ("https://a.dev/p#frag?not-query", "https://a.dev/p"),
        ("https://a.dev?", "https://a.dev/?"),
        ("https://a.dev:443/x", "https://a.dev/x"),
        ("http://a.dev:80/x", "http://a.dev/x"),
        ("http://a.dev:0080/x", "http://a.dev/x"),
        ("http://a.dev:443/x", "http://a.dev:443/x"),
        ("https://a.dev:/x", "https://a.dev/x"),
        ("https://a.dev:8443/x", "https://a.dev:8443/x"),
        ("https://A.Dev/CaseKept", "https://a.dev/CaseKept"),
        ("https://a.dev/a/./b/../c", "https://a.dev/a/c"),
        ("https://a.dev/a/%2e%2E/c", "https://a.dev/c"),
        ("https://a.dev/a/..", "https://a.dev/"),
        ("https://a.dev/../../x", "https://a.dev/x"),
        ("https://a.dev/q?name='x'", "https://a.dev/q?name=%27x%27"),
        ("https://a.dev/it's", "https://a.dev/it's"),
        ("http:///a.dev/x", "http://a.dev/x"),
        ("https://a.dev./x", "https://a.dev./x"),
        ("https://%61.dev/x", "https://a.dev/x"),
        ("http://@a.dev/", "http://a.dev/"),
        ("http://:@a.dev/", "http://a.dev/"),
    ],
)
def test_normalized_href(raw: str, href: str) -> None:
    parsed = parse_url(raw)
    assert parsed is not None
    assert parsed.href == href


@pytest.mark.parametrize(
    ("raw", "host"),
    [
        ("http://2130706433/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://017700000001/", "127.0.0.1"),
        ("http://0x7F000001/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://10.1/", "10.0.0.1"),
        ("http://192.168.257/", "192.168.1.1"),
        ("http://0/", "0.0.0.0"),
        ("http://0x/", "0.0.0.0"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("http://%31%32%37.0.0.1/", "127.0.0.1"),
        ("http://[::1]/", "[::1]"),
        ("http://[0:0:0:0:0:0:0:1]/", "[::1]"),
        ("http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"),
        ("http://[2001:DB8:0:0:1:0:0:1]/", "[2001:db8::1:0:0:1]"),
    ],
)
def test_ip_hosts_are_parsed_the_whatwg_way(raw: str, host: str) -> None:
    parsed = parse_url(raw)
    assert parsed is not None
    assert parsed.host == host
    assert parsed.ip is not None


@pytest.mark.parametrize(
    "raw",
    [
        "http://a.dev:99999/",
        "http://a.dev:8x/",
        "http://1.2.3.256/",
        "http://1.2.3.4.5/",
        "http://0x1g.1/",
        "http://08.1/",
        "http://[::1/",
        "http://[::1]x/",
        "http://[fe80::1%25eth0]/",
        "http://[not-ipv6]/",
        "http://a%2fb.dev/",
        "http://%ff.dev/",
        "http:///",
        "http://:80/",
    ],
)
def test_unparseable_urls_are_left_literal(raw: str) -> None:
    assert parse_url(raw) is None
    assert keys(f"see {raw} now") == [None]


# -- credentials and placeholders ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "https://user:secret@docs.python.org/",
        "https://user@docs.python.org/",
        "https://:secret@docs.python.org/",
        "https://a@b@docs.python.org/",
        "https://user:pw@wiki.example.com/prd",  # a placeholder host is still checked first
    ],
)
def test_credentials_are_a_hard_error(text: str) -> None:
    with pytest.raises(UrlError, match="must not carry a username or password"):
        find_urls(f"Read {text} please")


@pytest.mark.parametrize(
    "host",
    [
        "example",
        "example.com",
        "example.net",
        "example.org",
        "invalid",
        "localhost",
        "test",
        "wiki.example.com",
        "a.b.example.net",
        "x.example.org",
        "x.example",
        "x.invalid",
        "api.localhost",
        "svc.test",
        "EXAMPLE.COM",
        "example.com.",
    ],
)
def test_placeholder_hosts_are_left_literal(host: str) -> None:
    assert is_placeholder_host(host)
    assert keys(f"https://{host}/prd/feature-x") == [None]


@pytest.mark.parametrize(
    "host", ["example.co", "myexample.com", "example.com.au", "testing.dev", "localhost.dev"]
)
def test_lookalike_hosts_are_fetched(host: str) -> None:
    assert not is_placeholder_host(host)
    assert keys(f"https://{host}/") == [f"https://{host}/"]


def test_seed_example_url_is_a_placeholder() -> None:
    assert keys("Generate test cases from this PRD: https://wiki.example.com/prd/feature-x") == [None]


def test_url_counts_dedups_normalized_urls_across_texts() -> None:
    counts = url_counts(
        [
            "a https://A.dev/x#one b https://a.dev/x#two",
            None,
            "https://a.dev:443/x https://b.dev https://example.com/",
        ]
    )
    assert counts == {"https://a.dev/x": 3, "https://b.dev/": 1}


# -- inlining and content --------------------------------------------------------------------------


def test_inline_format_is_exact() -> None:
    out = inline("Read https://a.dev/x.", {"https://a.dev/x": "BODY"})
    assert out == (
        "Read https://a.dev/x\n\n--- OMK resolved content ---\nBODY\n--- end OMK resolved content ---."
    )
    assert BEGIN_MARKER == "\n\n--- OMK resolved content ---\n"
    assert END_MARKER == "\n--- end OMK resolved content ---"


def test_inline_replaces_every_occurrence_keeping_raw_text() -> None:
    text = "A HTTPS://a.dev/x#f, B (https://a.dev/x) C https://example.com/ D"
    out = inline(text, {"https://a.dev/x": "C1"})
    block = f"{BEGIN_MARKER}C1{END_MARKER}"
    assert out == f"A HTTPS://a.dev/x#f{block}, B (https://a.dev/x{block}) C https://example.com/ D"


def test_inline_leaves_unresolved_urls_and_plain_text_alone() -> None:
    assert inline("no urls here", {}) == "no urls here"
    assert inline("https://b.dev/", {"https://a.dev/": "x"}) == "https://b.dev/"


@pytest.mark.parametrize(
    ("raw", "content"),
    [
        ("\ufeffhello", "hello"),
        ("a\r\nb\rc\n", "a\nb\nc"),
        ("  \n text \t\n", "text"),
        ("\ufeff\ufeffx", "\ufeffx"),  # only one leading BOM is removed
    ],
)
def test_normalize_content(raw: str, content: str) -> None:
    assert normalize_content(raw) == content


@pytest.mark.parametrize("raw", ["", "   ", "\ufeff \r\n"])
def test_empty_content_is_an_error(raw: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        normalize_content(raw)


def test_content_size_limit_counts_utf8_bytes_after_normalization() -> None:
    assert len(normalize_content("é" * (MAX_CONTENT_BYTES // 2))) == MAX_CONTENT_BYTES // 2
    with pytest.raises(ValueError, match="over the 1048576-byte limit"):
        normalize_content("é" * (MAX_CONTENT_BYTES // 2) + "x")
    assert normalize_content("  " + "x" * MAX_CONTENT_BYTES + "\n\n")  # trimming happens first
