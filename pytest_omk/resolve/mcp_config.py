"""The MCP resolver configuration: ``.mcp.json`` entries that declare how to fetch URLs (§4.5).

Only ``mcpServers`` entries with **both** ``urlPatterns`` and ``fetchTool`` are resolvers; other
entries (an editor's own MCP servers, say) are ignored. Everything here is pure: reading the file,
validating it, matching a host, building tool arguments and extracting the content of a result.
Finding and reading the file and the launch fields are shared with the agent's MCP tools
(:mod:`pytest_omk.resolve.mcp_servers`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_omk.errors import ConfigError, ResolveError
from pytest_omk.js.regex import JsRegexError, compile_js_regex
from pytest_omk.resolve.hosts import parse_host
from pytest_omk.resolve.mcp_servers import McpServerSpec, launch_fields, read_mcp_config

_TEMPLATE_GROUP = re.compile(r"\$(\d+)")


class McpError(Exception):
    """An MCP resolver could not produce content for a URL (the safe HTTP fallback runs next)."""


@dataclass(frozen=True)
class UrlTransform:
    """Turns a URL into tool arguments: a JavaScript regex and ``$N`` templates."""

    regex: re.Pattern[str]
    params: Mapping[str, str]


@dataclass(frozen=True)
class FetchTool:
    """The tool that fetches a document, and how its arguments and result are shaped."""

    name: str
    url_param: str = "url"
    transform: UrlTransform | None = None
    content_extract: str | None = None


@dataclass(frozen=True)
class McpServerConfig(McpServerSpec):
    """One resolver server: how to start it (the inherited fields) and which hosts it answers for."""

    url_patterns: tuple[str, ...] = field(kw_only=True)
    fetch_tool: FetchTool = field(kw_only=True)

    def matches(self, hostname: str) -> bool:
        """Whether ``hostname`` is one of this server's hosts (``*.base`` excludes the apex)."""
        host = hostname.lower().rstrip(".")
        return any(
            host.endswith(pattern[1:]) if pattern.startswith("*.") else host == pattern
            for pattern in self.url_patterns
        )


def load_config(path: Path) -> list[McpServerConfig]:
    """The resolver servers of an ``.mcp.json`` file; :class:`ConfigError` when it is invalid."""
    return parse_config(read_mcp_config(path), str(path))


def parse_config(data: Any, source: str) -> list[McpServerConfig]:
    """Validate parsed ``.mcp.json`` content; ``source`` names it in errors."""
    if not isinstance(data, dict):
        raise ConfigError(f"MCP config {source}: the top level must be an object")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"MCP config {source}: mcpServers must be an object")
    configs = []
    for name, entry in servers.items():
        if isinstance(entry, dict) and "urlPatterns" in entry and "fetchTool" in entry:
            configs.append(_server(entry, f"MCP config {source}: mcpServers.{name}", name))
    return configs


def _server(entry: dict[str, Any], where: str, name: str) -> McpServerConfig:
    command, args, env = launch_fields(entry, where)
    return McpServerConfig(
        name=name,
        command=command,
        args=args,
        env=env,
        url_patterns=_patterns(entry["urlPatterns"], f"{where}.urlPatterns"),
        fetch_tool=_fetch_tool(entry["fetchTool"], f"{where}.fetchTool"),
    )


def _patterns(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{where} must be a non-empty array of host names")
    for pattern in value:
        if not isinstance(pattern, str) or not pattern.strip():
            raise ConfigError(f"{where} entries must be non-blank strings")
        host = pattern.removeprefix("*.")
        # A hostname allow-list, not a URL substring: anything a host cannot contain is refused,
        # and the host must already be in its normalized (lower-case, ASCII) form.
        if any(c in host for c in "/:?#*") or parse_host(host) != host:
            raise ConfigError(f"{where}: {pattern!r} is not a host name or *.host name")
    return tuple(value)


def _fetch_tool(value: Any, where: str) -> FetchTool:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be an object")
    name = _non_blank(value.get("name"), f"{where}.name", required=True)
    url_param = _non_blank(value.get("urlParam"), f"{where}.urlParam") or "url"
    extract = _non_blank(value.get("contentExtract"), f"{where}.contentExtract")
    transform = None
    if "urlTransform" in value:
        transform = _transform(value["urlTransform"], f"{where}.urlTransform")
    assert name is not None
    return FetchTool(name, url_param, transform, extract)


def _non_blank(value: Any, where: str, *, required: bool = False) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where} must be a non-blank string")
    return value


def _transform(value: Any, where: str) -> UrlTransform:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be an object with regex and params")
    regex, params = value.get("regex"), value.get("params")
    if not isinstance(regex, str):
        raise ConfigError(f"{where}.regex must be a string")
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        raise ConfigError(f"{where}.params must map parameter names to template strings")
    try:
        # The format owner builds the regex without flags; "g" is a no-op for one search (an empty
        # flags string would mean the default "i" in compile_js_regex).
        compiled = compile_js_regex(regex, "g").compiled
    except JsRegexError as exc:
        raise ConfigError(f"{where}.regex: {exc}") from None
    return UrlTransform(compiled, dict(params))


def select_server(servers: Sequence[McpServerConfig], hostname: str, url: str) -> McpServerConfig | None:
    """The one server matching ``hostname``; two or more is an error (tighten the patterns)."""
    matching = [s for s in servers if s.matches(hostname)]
    if len(matching) > 1:
        names = ", ".join(repr(s.name) for s in matching)
        raise ResolveError(
            f"Sample URL {url} matches several MCP resolvers ({names}); tighten their urlPatterns"
        )
    return matching[0] if matching else None


def tool_arguments(tool: FetchTool, url: str) -> dict[str, str]:
    """The fetch tool's arguments for ``url``."""
    if tool.transform is None:
        return {tool.url_param: url}
    match = tool.transform.regex.search(url)
    if match is None:
        raise McpError(f"urlTransform regex {tool.transform.regex.pattern!r} does not match {url}")

    def group(found: re.Match[str]) -> str:
        index = int(found.group(1))
        if index > (match.re.groups if match else 0):
            return ""
        return match.group(index) or ""

    return {name: _TEMPLATE_GROUP.sub(group, template) for name, template in tool.transform.params.items()}


def result_content(result: Any, tool: FetchTool) -> str:
    """The document text in a ``tools/call`` result (a JSON-shaped dict)."""
    if not isinstance(result, dict):
        raise McpError("the tool result is not an object")
    content = result.get("content")
    texts = [
        item["text"]
        for item in content or ()
        if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str)
    ]
    text = "\n".join(texts).strip()
    if result.get("isError") is True:
        raise McpError(f"the tool reported an error: {text[:200] or '(no message)'}")
    if not isinstance(content, list):
        raise McpError("the tool result has no content array")
    if not text:
        raise McpError("the tool returned no text")
    return text if tool.content_extract is None else _extract(text, tool.content_extract)


def _extract(text: str, path: str) -> str:
    try:
        node: Any = json.loads(text)
    except ValueError:
        raise McpError(f"contentExtract {path!r}: the tool text is not JSON") from None
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            raise McpError(f"contentExtract {path!r}: no key {key!r} in the tool's JSON")
        node = node[key]
    if isinstance(node, str):
        return node
    if isinstance(node, (dict, list)):
        return json.dumps(node, ensure_ascii=False, separators=(",", ":"))
    raise McpError(f"contentExtract {path!r} leads to a {type(node).__name__}, not text")
