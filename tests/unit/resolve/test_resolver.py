"""``UrlResolver``: once-per-run fetches, inlining, recordings and replay, fail-closed errors, limits.

Documents come from a real loopback server reached as ``docs.fixture.dev`` (stub DNS → 127.0.0.1,
the name allow-listed); nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pytest_omk.errors import ResolveError
from pytest_omk.models import Sample
from pytest_omk.models.run import ResolvedText, SamplePlan
from pytest_omk.recordings.store import RecordingStore
from pytest_omk.resolve.resolver import UrlResolver
from pytest_omk.resolve.urls import BEGIN_MARKER, END_MARKER
from tests.fakes.doc_server import DocServer, Page

HOST = "docs.fixture.dev"
T = TypeVar("T")


class CountingDns:
    def __init__(self) -> None:
        self.lookups: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.lookups.append(host)
        if host != HOST:
            raise OSError(f"no such host {host}")
        return ["127.0.0.1"]


def plan(
    sample_id: str, prompt: str, context: str | None = None, base: Path = Path("/samples")
) -> SamplePlan:
    fields = {"sample_id": sample_id, "prompt": prompt} | ({} if context is None else {"context": context})
    sample = Sample.model_validate(fields)
    return SamplePlan(sample=sample, base_dir=base, rootdir=base, system=None, model=None)


def run(resolver: UrlResolver, work: Callable[[], Awaitable[T]]) -> T:
    async def main() -> T:
        try:
            return await work()
        finally:
            await resolver.aclose()

    return asyncio.run(main())


@pytest.fixture
def server() -> Iterator[DocServer]:
    with DocServer() as doc_server:
        yield doc_server


@pytest.fixture
def make(tmp_path: Path) -> Callable[..., tuple[UrlResolver, CountingDns]]:
    def build(store: RecordingStore | None = None, **kwargs: Any) -> tuple[UrlResolver, CountingDns]:
        dns = CountingDns()
        resolver = UrlResolver(store, allow_hosts={HOST}, rootdir=tmp_path, dns=dns, timeout=2.0, **kwargs)
        return resolver, dns

    return build


def block(content: str) -> str:
    return f"{BEGIN_MARKER}{content}{END_MARKER}"


def test_inlines_prompt_and_context_and_reports_digests(server: DocServer, make: Any) -> None:
    server.text("/a", "\ufeffAlpha\r\ndoc\n")
    server.text("/b", "Beta")
    url_a, url_b = f"http://{HOST}:{server.port}/a", f"http://{HOST}:{server.port}/b"
    resolver, _ = make()
    resolved = run(
        resolver, lambda: resolver.resolve(plan("s1", f"Read {url_a}.", f"Also ({url_b}) and {url_a}#x"))
    )
    alpha, beta = block("Alpha\ndoc"), block("Beta")
    assert resolved.prompt == f"Read {url_a}{alpha}."
    assert resolved.context == f"Also ({url_b}{beta}) and {url_a}#x{alpha}"
    assert resolved.urls == [
        {"url": url_a, "sha256": _sha("Alpha\ndoc"), "bytes": 9, "via": "http"},
        {"url": url_b, "sha256": _sha("Beta"), "bytes": 4, "via": "http"},
    ]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_each_url_is_fetched_once_for_concurrent_samples(server: DocServer, make: Any) -> None:
    server.pages["/shared"] = Page(b"shared doc", headers={"Content-Type": "text/plain"}, delay=0.1)
    url = f"http://{HOST}:{server.port}/shared"
    resolver, dns = make()
    plans = [plan(f"s{i}", f"Doc {i}: {url}") for i in range(5)]

    async def all_samples() -> list[ResolvedText]:
        return list(await asyncio.gather(*(resolver.resolve(p) for p in plans)))

    results = run(resolver, all_samples)
    assert [r.prompt for r in results] == [f"Doc {i}: {url}{block('shared doc')}" for i in range(5)]
    assert server.paths() == ["/shared"]
    assert dns.lookups == [HOST]


def test_samples_without_fetchable_urls_skip_resolution(make: Any) -> None:
    resolver, dns = make()
    text = "See https://wiki.example.com/prd/feature-x and http://localhost:8080/x"
    resolved = run(resolver, lambda: resolver.resolve(plan("s", text, "plain context")))
    assert resolved == ResolvedText(text, "plain context")
    assert dns.lookups == []


def test_failure_names_the_url_and_reason_and_never_sends_the_raw_url(server: DocServer, make: Any) -> None:
    resolver, _ = make()
    url = f"http://{HOST}:{server.port}/missing"
    with pytest.raises(ResolveError) as caught:
        run(resolver, lambda: resolver.resolve(plan("s", f"Read {url}")))
    message = str(caught.value)
    assert url in message and "HTTP status 404" in message and "raw URL is not sent" in message


def test_private_address_fails_closed(make: Any) -> None:
    resolver, _ = make()
    with pytest.raises(ResolveError, match=r"http://10\.0\.0\.7/x could not be resolved .*10\.0\.0\.0/8"):
        run(resolver, lambda: resolver.resolve(plan("s", "Read http://10.0.0.7/x now")))


def test_credentials_fail_the_sample(make: Any) -> None:
    resolver, _ = make()
    with pytest.raises(ResolveError, match="must not carry a username or password"):
        run(resolver, lambda: resolver.resolve(plan("s", "Read https://bob:pw@wiki.example.com/x")))


def test_one_failing_url_only_fails_the_samples_that_use_it(server: DocServer, make: Any) -> None:
    server.text("/ok", "fine")
    ok, bad = f"http://{HOST}:{server.port}/ok", f"http://{HOST}:{server.port}/bad"
    resolver, _ = make()
    good_plan, bad_plan = plan("good", f"Read {ok}"), plan("bad", f"Read {bad} and {ok}")
    resolver.register([good_plan, bad_plan], name="eval-samples.json")

    async def both() -> list[Any]:
        return [
            *await asyncio.gather(
                resolver.resolve(good_plan), resolver.resolve(bad_plan), return_exceptions=True
            )
        ]

    good, failed = run(resolver, both)
    assert isinstance(good, ResolvedText) and good.urls[0]["url"] == ok
    assert isinstance(failed, ResolveError) and bad in str(failed)


def test_recorded_fetch_replays_without_network(server: DocServer, make: Any, tmp_path: Path) -> None:
    server.text("/doc", "recorded body")
    url = f"http://{HOST}:{server.port}/doc"
    directory = tmp_path / "recordings"
    first, _ = make(RecordingStore(directory, "new_episodes"))
    live = run(first, lambda: first.resolve(plan("s", f"Read {url}")))
    assert live.urls[0]["via"] == "http"
    (file,) = (directory / "fetch").rglob("*.json")
    assert json.loads(file.read_text())["url"] == url

    server.pages.clear()  # a live fetch would now get a 404
    second, dns = make(RecordingStore(directory, "none"))
    replayed = run(second, lambda: second.resolve(plan("s", f"Read {url}")))
    assert replayed.prompt == live.prompt
    assert replayed.urls == [{**live.urls[0], "via": "replay"}]
    assert dns.lookups == []


def test_replay_only_mode_miss_is_a_resolve_error(make: Any, tmp_path: Path) -> None:
    resolver, dns = make(RecordingStore(tmp_path / "empty", "none"))
    with pytest.raises(ResolveError, match=r"https://docs\.python\.org/3/ has no recorded fetch"):
        run(resolver, lambda: resolver.resolve(plan("s", "Read https://docs.python.org/3/")))
    assert dns.lookups == []


def test_more_than_64_distinct_urls_in_a_set_fail_every_sample_without_fetching(make: Any) -> None:
    resolver, dns = make()
    plans = [plan(f"s{i}", f"https://{HOST}/doc/{i}") for i in range(65)]
    resolver.register(plans, name="big.json")
    for sample_plan in (plans[0], plans[64]):
        with pytest.raises(
            ResolveError, match=r"sample set big\.json has 65 distinct URLs to resolve; the limit is 64"
        ):
            run(resolver, lambda p=sample_plan: resolver.resolve(p))  # type: ignore[misc]
    assert dns.lookups == []


def test_inlined_total_over_8_mib_fails(server: DocServer, make: Any) -> None:
    server.pages["/mib"] = Page(b"m" * 1_000_000, headers={"Content-Type": "text/plain"})
    url = f"http://{HOST}:{server.port}/mib"
    resolver, _ = make()
    under = plan("under", " ".join([url] * 8))
    over = plan("over", " ".join([url] * 9))
    assert len(run(resolver, lambda: resolver.resolve(under)).prompt) > 8_000_000
    resolver2, _ = make()
    with pytest.raises(ResolveError, match="inlines 9000000 bytes of URL content; the limit is 8388608"):
        run(resolver2, lambda: resolver2.resolve(over))


def test_set_wide_total_counts_other_samples_occurrences(server: DocServer, make: Any) -> None:
    server.pages["/mib"] = Page(b"m" * 1_000_000, headers={"Content-Type": "text/plain"})
    url = f"http://{HOST}:{server.port}/mib"
    resolver, _ = make()
    plans = [plan("a", " ".join([url] * 5)), plan("b", " ".join([url] * 4))]
    resolver.register(plans, name="set.json")
    with pytest.raises(ResolveError, match=r"sample set set\.json inlines 9000000 bytes"):
        run(resolver, lambda: resolver.resolve(plans[0]))


def test_empty_document_is_an_error(server: DocServer, make: Any) -> None:
    server.text("/blank", " \r\n\t ")
    resolver, _ = make()
    with pytest.raises(ResolveError, match="the resolved content is empty"):
        run(resolver, lambda: resolver.resolve(plan("s", f"http://{HOST}:{server.port}/blank")))
