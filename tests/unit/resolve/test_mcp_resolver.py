"""MCP resolvers: ``.mcp.json`` validation, host matching, tool arguments and results, and a real
stdio server (``tests/fakes/mcp_docs_server.py``) resolving URLs, falling back to safe HTTP, and
stopped at close. The token in the server's ``env`` must never appear in any output or recording.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.errors import ConfigError, ResolveError
from pytest_omk.models import Sample
from pytest_omk.models.run import SamplePlan
from pytest_omk.recordings.store import RecordingStore
from pytest_omk.resolve.mcp_config import (
    FetchTool,
    McpError,
    load_config,
    parse_config,
    result_content,
    select_server,
    tool_arguments,
)
from pytest_omk.resolve.mcp_servers import find_mcp_config as find_config
from pytest_omk.resolve.resolver import UrlResolver
from pytest_omk.resolve.urls import BEGIN_MARKER, END_MARKER
from tests.fakes.doc_server import DocServer

SERVER_SCRIPT = Path(__file__).resolve().parents[2] / "fakes" / "mcp_docs_server.py"
TOKEN = "tok-7c1e9a55d3b2f0aa"
REGEX = r"docs\.corp\.dev(?::\d+)?/([^/]+/[^/]+)/([^/?#]+)"


def entry(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "command": sys.executable,
        "args": [str(SERVER_SCRIPT)],
        "env": {"DOCS_API_TOKEN": TOKEN},
        "urlPatterns": ["docs.corp.dev"],
        "fetchTool": {
            "name": "fetch_doc",
            "urlTransform": {"regex": REGEX, "params": {"namespace": "$1", "slug": "$2"}},
            "contentExtract": "data.body",
        },
    }
    base.update(changes)
    return base


def servers(**entries: Any) -> list[Any]:
    return parse_config({"mcpServers": entries}, "test")


# -- configuration ---------------------------------------------------------------------------------


def test_only_entries_with_url_patterns_and_fetch_tool_are_resolvers() -> None:
    configs = servers(
        docs=entry(),
        editor={"command": "npx", "args": ["some-editor-server"]},
        half={"command": "x", "urlPatterns": ["a.dev"]},
        broken_but_ignored={"command": 3, "fetchTool": {}},
    )
    assert [c.name for c in configs] == ["docs"]
    assert configs[0].fetch_tool.url_param == "url"
    assert "tok-" not in repr(configs[0])  # env never shows in a repr


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"command": "  "}, "command must be a non-blank string"),
        ({"args": "--flag"}, "args must be an array of strings"),
        ({"args": [1]}, "args must be an array of strings"),
        ({"env": {"A": 1}}, "env must map names to strings"),
        ({"urlPatterns": []}, "non-empty array"),
        ({"urlPatterns": "docs.corp.dev"}, "non-empty array"),
        ({"urlPatterns": [" "]}, "non-blank strings"),
        ({"urlPatterns": ["docs.corp.dev/wiki"]}, "is not a host name"),
        ({"urlPatterns": ["docs.corp.dev:8443"]}, "is not a host name"),
        ({"urlPatterns": ["docs.corp.dev?x"]}, "is not a host name"),
        ({"urlPatterns": ["docs.corp.dev#x"]}, "is not a host name"),
        ({"urlPatterns": ["https://docs.corp.dev"]}, "is not a host name"),
        ({"urlPatterns": ["Docs.Corp.Dev"]}, "is not a host name"),
        ({"urlPatterns": ["*"]}, "is not a host name"),
        ({"urlPatterns": ["*."]}, "is not a host name"),
        ({"urlPatterns": ["docs.*.dev"]}, "is not a host name"),
        ({"urlPatterns": ["0x7f.1"]}, "is not a host name"),
        ({"fetchTool": "fetch_doc"}, "fetchTool must be an object"),
        ({"fetchTool": {"name": ""}}, "fetchTool.name must be a non-blank string"),
        ({"fetchTool": {"name": "f", "urlParam": " "}}, "urlParam must be a non-blank string"),
        ({"fetchTool": {"name": "f", "contentExtract": ""}}, "contentExtract must be a non-blank string"),
        ({"fetchTool": {"name": "f", "urlTransform": {"regex": "(", "params": {}}}}, "urlTransform.regex"),
        ({"fetchTool": {"name": "f", "urlTransform": {"regex": "x", "params": {"a": 1}}}}, "params must map"),
        ({"fetchTool": {"name": "f", "urlTransform": "x"}}, "urlTransform must be an object"),
    ],
)
def test_invalid_resolver_entries_are_config_errors(changes: dict[str, Any], reason: str) -> None:
    with pytest.raises(ConfigError, match=reason) as caught:
        servers(docs=entry(**changes))
    assert "mcpServers.docs" in str(caught.value)


@pytest.mark.parametrize(
    ("data", "reason"),
    [([], "top level must be an object"), ({"mcpServers": []}, "mcpServers must be an object")],
)
def test_invalid_config_shape(data: Any, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        parse_config(data, "x")


def test_config_discovery(tmp_path: Path) -> None:
    assert find_config(tmp_path, None) is None
    (tmp_path / ".mcp.json").write_text("{}")
    assert find_config(tmp_path, None) == tmp_path / ".mcp.json"
    (tmp_path / "other.json").write_text("{not json")
    assert find_config(tmp_path, Path("other.json")) == tmp_path / "other.json"
    with pytest.raises(ConfigError, match="cannot be read as JSON"):
        load_config(tmp_path / "other.json")
    with pytest.raises(ConfigError, match="does not exist"):
        find_config(tmp_path, Path("missing.json"))


def test_host_matching_is_exact_or_subdomain_wildcard() -> None:
    (config,) = servers(docs=entry(urlPatterns=["docs.corp.dev", "*.wiki.corp.dev"]))
    for host in ("docs.corp.dev", "DOCS.corp.dev.", "a.wiki.corp.dev", "a.b.wiki.corp.dev"):
        assert config.matches(host), host
    for host in ("wiki.corp.dev", "xdocs.corp.dev", "docs.corp.dev.evil.dev", "corp.dev", "notwiki.corp.dev"):
        assert not config.matches(host), host


def test_two_matching_servers_are_an_error() -> None:
    configs = servers(a=entry(), b=entry(urlPatterns=["*.corp.dev"]), c=entry(urlPatterns=["other.dev"]))
    with pytest.raises(ResolveError, match=r"matches several MCP resolvers \('a', 'b'\)"):
        select_server(configs, "docs.corp.dev", "https://docs.corp.dev/x")
    assert select_server(configs, "other.dev", "https://other.dev/") is configs[2]
    assert select_server(configs, "nothing.dev", "https://nothing.dev/") is None


def test_tool_arguments() -> None:
    url = "https://docs.corp.dev/team/space/intro?v=2"
    (config,) = servers(docs=entry())
    assert tool_arguments(config.fetch_tool, url) == {"namespace": "team/space", "slug": "intro"}
    assert tool_arguments(FetchTool("f"), url) == {"url": url}
    assert tool_arguments(FetchTool("f", url_param="href"), url) == {"href": url}
    (templated,) = servers(
        docs=entry(
            fetchTool={
                "name": "f",
                "urlTransform": {
                    "regex": r"corp\.dev/(\w+)(?:/(nope))?",
                    "params": {
                        "all": "$0",
                        "first": "[$1]",
                        "unmatched": "$2",
                        "absent": "$9",
                        "literal": "$x",
                    },
                },
            }
        )
    )
    assert tool_arguments(templated.fetch_tool, url) == {
        "all": "corp.dev/team",
        "first": "[team]",
        "unmatched": "",
        "absent": "",
        "literal": "$x",
    }
    with pytest.raises(McpError, match="does not match"):
        tool_arguments(config.fetch_tool, "https://DOCS.CORP.DEV/team/space/intro")  # no i flag


@pytest.mark.parametrize(
    ("result", "extract", "expected"),
    [
        ({"content": [{"type": "text", "text": " a "}, {"type": "image", "data": "x"}, {"type": "text", "text": "b\n"}]}, None, "a \nb"),
        ({"content": [{"type": "text", "text": '{"data": {"body": "B"}}'}]}, "data.body", "B"),
        ({"content": [{"type": "text", "text": '{"data": {"body": {"k": [1, "é"]}}}'}]}, "data.body", '{"k":[1,"é"]}'),
        ({"content": [{"type": "text", "text": '{"data": [1, 2]}'}]}, "data", "[1,2]"),
    ],
)  # fmt: skip
def test_result_content(result: dict[str, Any], extract: str | None, expected: str) -> None:
    assert result_content(result, FetchTool("f", content_extract=extract)) == expected


@pytest.mark.parametrize(
    ("result", "extract", "reason"),
    [
        ("text", None, "not an object"),
        ({"isError": True, "content": [{"type": "text", "text": "denied"}]}, None, "reported an error: denied"),
        ({"content": "x"}, None, "no content array"),
        ({}, None, "no content array"),
        ({"content": [{"type": "text", "text": "  "}]}, None, "no text"),
        ({"content": [{"type": "resource", "text": "x"}]}, None, "no text"),
        ({"content": [{"type": "text", "text": "plain"}]}, "data", "not JSON"),
        ({"content": [{"type": "text", "text": '{"data": 3}'}]}, "data", "leads to a int"),
        ({"content": [{"type": "text", "text": '{"data": null}'}]}, "data", "leads to a NoneType"),
        ({"content": [{"type": "text", "text": '{"data": {}}'}]}, "data.body", "no key 'body'"),
        ({"content": [{"type": "text", "text": '{"data": ["a"]}'}]}, "data.0", "no key '0'"),
    ],
)  # fmt: skip
def test_result_content_refusals(result: Any, extract: str | None, reason: str) -> None:
    with pytest.raises(McpError, match=reason):
        result_content(result, FetchTool("f", content_extract=extract))


# -- a real stdio server ---------------------------------------------------------------------------


def plan(prompt: str, root: Path) -> SamplePlan:
    sample = Sample.model_validate({"sample_id": "mcp", "prompt": prompt})
    return SamplePlan(sample=sample, base_dir=root, rootdir=root, system=None, model=None)


@pytest.fixture
def server() -> Iterator[DocServer]:
    with DocServer() as doc_server:
        yield doc_server


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_real_server_resolves_and_falls_back_and_is_stopped(tmp_path: Path, server: DocServer) -> None:
    pidfile = tmp_path / "server.pid"
    config = {"mcpServers": {"docs": entry(env={"DOCS_API_TOKEN": TOKEN, "MCP_DOCS_PIDFILE": str(pidfile)})}}
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    server.text("/team/space/missing", "served over HTTP")
    via_mcp = "https://docs.corp.dev/team/space/intro"
    via_http = f"http://docs.corp.dev:{server.port}/team/space/missing"  # the tool errors on "missing"

    async def dns(host: str) -> list[str]:
        return ["127.0.0.1"]

    recordings = tmp_path / "recordings"
    resolver = UrlResolver(
        RecordingStore(recordings, "new_episodes"), allow_hosts={"docs.corp.dev"}, rootdir=tmp_path, dns=dns
    )

    async def go() -> Any:
        try:
            return await resolver.resolve(plan(f"Read {via_mcp} then {via_http}.", tmp_path))
        finally:
            await resolver.aclose()

    resolved = asyncio.run(go())
    document = f"Document intro in team/space.\nToken length: {len(TOKEN)}."
    assert resolved.prompt == (
        f"Read {via_mcp}{BEGIN_MARKER}{document}{END_MARKER} then "
        f"{via_http}{BEGIN_MARKER}served over HTTP{END_MARKER}."
    )
    assert [(u["url"], u["via"]) for u in resolved.urls] == [(via_mcp, "mcp"), (via_http, "http")]
    assert _process_gone(int(pidfile.read_text()))
    written = "".join(p.read_text() for p in recordings.rglob("*.json"))
    assert via_mcp in written and TOKEN not in written


def test_failed_start_falls_back_and_reports_both_reasons_without_the_token(tmp_path: Path) -> None:
    config = {"mcpServers": {"docs": entry(command=f"/nonexistent/bin/{TOKEN}")}}
    (tmp_path / "resolvers.json").write_text(json.dumps(config))

    async def dns(host: str) -> list[str]:
        return ["10.9.8.7"]

    resolver = UrlResolver(None, rootdir=tmp_path, mcp_config_path=Path("resolvers.json"), dns=dns)

    async def go() -> Any:
        try:
            return await resolver.resolve(plan("Read https://docs.corp.dev/team/space/intro", tmp_path))
        finally:
            await resolver.aclose()

    with pytest.raises(ResolveError) as caught:
        asyncio.run(go())
    message = str(caught.value)
    assert "MCP server 'docs': the server could not be started" in message
    assert "safe HTTP:" in message and "10.0.0.0/8" in message
    assert TOKEN not in message and "***" in message


def test_invalid_config_fails_at_construction(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"docs": entry(urlPatterns=["a/b"])}}))
    with pytest.raises(ConfigError, match="is not a host name"):
        UrlResolver(None, rootdir=tmp_path)


def test_ambiguous_servers_fail_the_url(tmp_path: Path) -> None:
    config = {"mcpServers": {"a": entry(), "b": entry(urlPatterns=["*.corp.dev"])}}
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    resolver = UrlResolver(None, rootdir=tmp_path)

    async def go() -> Any:
        try:
            return await resolver.resolve(plan("Read https://docs.corp.dev/team/space/intro", tmp_path))
        finally:
            await resolver.aclose()

    with pytest.raises(ResolveError, match="tighten their urlPatterns"):
        asyncio.run(go())


def test_resolver_env_credentials_are_offered_for_scrubbing(tmp_path: Path) -> None:
    config = {"mcpServers": {"docs": entry(env={"DOCS_API_TOKEN": TOKEN, "LOG_LEVEL": "debug"})}}
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    assert UrlResolver(None, rootdir=tmp_path).secrets == {TOKEN}
