"""URL auto-fetching: the :class:`UrlResolver` stage that inlines URL contents into samples.

Each distinct normalized URL is resolved once per run, whichever samples mention it, through the
recordings store (kind ``fetch``): replayed when recorded, otherwise fetched by the one matching
MCP resolver, falling back to safe HTTP. Resolution fails closed: a URL that cannot be resolved is
a :class:`~pytest_omk.errors.ResolveError` (item ERROR), never sent raw to the model.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_omk.errors import ReplayMissError, ResolveError
from pytest_omk.models.run import ResolvedText, SamplePlan
from pytest_omk.recordings.scrub import secrets_from_env
from pytest_omk.resolve.mcp_config import McpError, McpServerConfig, load_config, select_server
from pytest_omk.resolve.mcp_resolver import McpResolver
from pytest_omk.resolve.mcp_servers import find_mcp_config
from pytest_omk.resolve.safe_http import DnsResolver, FetchError, SafeHttpFetcher
from pytest_omk.resolve.urls import (
    MAX_TOTAL_BYTES,
    MAX_URLS,
    UrlError,
    inline,
    normalize_content,
    parse_url,
    url_counts,
)

if TYPE_CHECKING:
    from pytest_omk.recordings.store import RecordingStore

__all__ = ["ResolvedUrl", "UrlResolver"]

_SampleKey = tuple[Path, str]


@dataclass(frozen=True)
class ResolvedUrl:
    """The normalized content of one URL and how it was obtained."""

    url: str
    content: str
    sha256: str
    size: int
    via: str
    """``http``, ``mcp`` or ``replay``."""

    def report(self) -> dict[str, str | int]:
        """The URL's entry in the sample's record."""
        return {"url": self.url, "sha256": self.sha256, "bytes": self.size, "via": self.via}


@dataclass
class _SampleSet:
    """A sample file's URLs: their occurrence counts bound the set-wide limits."""

    name: str
    occurrences: dict[str, int]


class UrlResolver:
    """Implements the pipeline's ``Resolver`` protocol for a whole run.

    ``store`` may be ``None`` (always live). ``allow_hosts`` are exempt from the private-address
    block; ``mcp_config_path`` overrides ``<rootdir>/.mcp.json`` (an invalid config raises
    :class:`~pytest_omk.errors.ConfigError` here). ``dns`` replaces the system resolver (tests).
    """

    def __init__(
        self,
        store: RecordingStore | None,
        *,
        allow_hosts: Iterable[str] = (),
        mcp_config_path: Path | None = None,
        rootdir: Path,
        dns: DnsResolver | None = None,
        timeout: float = 30.0,
    ) -> None:
        self._store = store
        config = find_mcp_config(rootdir, mcp_config_path)
        self._servers = load_config(config) if config is not None else []
        self._http = SafeHttpFetcher(allow_hosts=allow_hosts, dns=dns, timeout=timeout)
        self._mcp = McpResolver(self._servers, timeout=timeout)
        self._fetches: dict[str, asyncio.Task[ResolvedUrl]] = {}
        self._sets: dict[_SampleKey, _SampleSet] = {}

    def register(self, plans: Iterable[SamplePlan], *, name: str = "") -> None:
        """Declare one sample set (a file's selected samples) before resolving any of them.

        The set-wide limits (64 distinct URLs, 8 MiB inlined) then hold for the set as a whole
        and fail the same way whichever sample runs first, and the set's URLs are fetched together.
        Unregistered samples form a set of their own.
        """
        sample_set = _SampleSet(name, {})
        for plan in plans:
            key = _key(plan)
            if key in self._sets:
                continue  # another repeat of the same sample: its URLs are counted once
            self._sets[key] = sample_set
            try:
                counts = _url_counts(plan)
            except UrlError:
                continue  # that sample's own resolve() reports it
            for url, count in counts.items():
                sample_set.occurrences[url] = sample_set.occurrences.get(url, 0) + count

    @property
    def secrets(self) -> frozenset[str]:
        """Credential-like values from the resolvers' ``env``, for the recordings store to scrub."""
        return frozenset(v for server in self._servers for v in secrets_from_env(server.env))

    async def resolve(self, plan: SamplePlan) -> ResolvedText:
        """The sample's text with every fetchable URL's content inlined; ResolveError otherwise."""
        sample = plan.sample
        try:
            own = _url_counts(plan)
        except UrlError as exc:
            raise ResolveError(str(exc)) from None
        if not own:
            return ResolvedText(sample.prompt, sample.context)
        sample_set = self._sets.get(_key(plan)) or _SampleSet("", own)
        where = f"sample set {sample_set.name}" if sample_set.name else f"sample {sample.sample_id!r}"
        if len(sample_set.occurrences) > MAX_URLS:
            raise ResolveError(
                f"{where} has {len(sample_set.occurrences)} distinct URLs to resolve; the limit is {MAX_URLS}"
            )
        # The set's URLs (own ones first in case this sample was left out of its registration).
        urls = list(dict.fromkeys([*own, *sample_set.occurrences]))
        # shield: a cancelled sample must not cancel a fetch other samples are waiting for.
        outcomes = await asyncio.gather(
            *(asyncio.shield(self._task(u)) for u in urls), return_exceptions=True
        )
        resolved: dict[str, ResolvedUrl] = {}
        for url, outcome in zip(urls, outcomes, strict=True):
            if isinstance(outcome, ResolvedUrl):
                resolved[url] = outcome
            elif url in own:
                raise _failure(url, outcome)
        total = sum(r.size * sample_set.occurrences.get(u, own.get(u, 0)) for u, r in resolved.items())
        if total > MAX_TOTAL_BYTES:
            raise ResolveError(
                f"{where} inlines {total} bytes of URL content; the limit is {MAX_TOTAL_BYTES}"
            )
        contents = {u: resolved[u].content for u in own}
        return ResolvedText(
            inline(sample.prompt, contents),
            None if sample.context is None else inline(sample.context, contents),
            [resolved[u].report() for u in own],
        )

    async def aclose(self) -> None:
        """Cancel pending fetches, stop the MCP servers and close the HTTP client."""
        for task in self._fetches.values():
            if not task.done():
                task.cancel()
        try:
            await self._mcp.aclose()
        finally:
            await self._http.aclose()

    def _task(self, url: str) -> asyncio.Task[ResolvedUrl]:
        task = self._fetches.get(url)
        if task is None:
            task = asyncio.create_task(self._resolve_url(url), name=f"pytest-omk-fetch {url}")
            self._fetches[url] = task
        return task

    async def _resolve_url(self, url: str) -> ResolvedUrl:
        parsed = parse_url(url)
        assert parsed is not None, "fetch keys are normalized URLs"
        # Checked before any replay, so an ambiguous config fails in CI replays too.
        server = select_server(self._servers, parsed.hostname, url)

        async def live() -> dict[str, Any]:
            return await self._fetch_live(url, server)

        try:
            if self._store is None:
                payload, replayed = await live(), False
            else:
                payload, replayed = await self._store.call_raw(
                    "fetch", {"url": url}, live, label=parsed.hostname
                )
        except ReplayMissError as exc:
            raise ResolveError(f"Sample URL {url} has no recorded fetch to replay: {exc}") from None
        content = payload.get("content")
        try:
            if not isinstance(content, str):
                raise ValueError("the recording has no text content")
            content = normalize_content(content)
        except ValueError as exc:
            raise ResolveError(f"Sample URL {url}: {exc}") from None
        via = "replay" if replayed else str(payload.get("via", "http"))
        return _resolved(url, content, via)

    async def _fetch_live(self, url: str, server: McpServerConfig | None) -> dict[str, Any]:
        reasons = []
        if server is not None:
            try:
                content = normalize_content(await self._mcp.fetch(server, url))
                return _payload(_resolved(url, content, "mcp"))
            except (McpError, ValueError) as exc:
                reasons.append(f"MCP server {server.name!r}: {self._mcp.scrub(str(exc))}")
        try:
            content = normalize_content(await self._http.fetch(url))
            return _payload(_resolved(url, content, "http"))
        except (FetchError, ValueError) as exc:
            reasons.append(f"safe HTTP: {exc}")
        raise ResolveError(
            f"Sample URL {url} could not be resolved ({'; '.join(reasons)}); the raw URL is not sent in its place"
        )


def _failure(url: str, outcome: BaseException) -> BaseException:
    """A fresh error for one sample: the shared exception would collect every sample's traceback."""
    if isinstance(outcome, ResolveError):
        return ResolveError(str(outcome))
    if isinstance(outcome, Exception):
        return ResolveError(f"Sample URL {url} could not be resolved ({type(outcome).__name__}: {outcome})")
    return outcome  # cancellation and the like pass through unchanged


def _key(plan: SamplePlan) -> _SampleKey:
    return (plan.base_dir, plan.sample.sample_id)


def _url_counts(plan: SamplePlan) -> dict[str, int]:
    return url_counts((plan.sample.prompt, plan.sample.context))


def _resolved(url: str, content: str, via: str) -> ResolvedUrl:
    data = content.encode("utf-8")
    return ResolvedUrl(url, content, hashlib.sha256(data).hexdigest(), len(data), via)


def _payload(resolved: ResolvedUrl) -> dict[str, Any]:
    return {
        "content": resolved.content,
        "sha256": resolved.sha256,
        "bytes": resolved.size,
        "via": resolved.via,
    }
