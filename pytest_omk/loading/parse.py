"""Parse sample-file text (JSON or YAML) into plain Python data, safely.

JSON: ``NaN``/``Infinity`` and a byte-order mark are rejected (as JavaScript's ``JSON.parse`` does).
YAML: duplicate keys are rejected, ``yes``/``no``/``on``/``off`` stay strings (YAML 1.2 booleans),
dates stay strings, and alias expansion is bounded so an alias bomb fails fast. libyaml's C parser
is used when available. Line numbers are looked up only when an error needs them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from pytest_omk.errors import SampleFileError

MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_ALIAS_USES = 1000
MAX_DEPTH = 64

_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _OmkYamlLoader(_Loader):  # type: ignore[misc,valid-type]
    """Safe loader with YAML 1.2 booleans, no timestamps, unique keys and bounded aliases."""

    alias_uses = 0

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        if node in self.constructed_objects:
            # A second construction request for a node is an alias use; many of them expand
            # into exponentially large data once validated (the "billion laughs" shape).
            self.alias_uses += 1
            if self.alias_uses > MAX_ALIAS_USES:
                raise yaml.constructor.ConstructorError(
                    None, None, f"more than {MAX_ALIAS_USES} alias references", node.start_mark
                )
        return super().construct_object(node, deep=deep)

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "a mapping key must be a plain value", key_node.start_mark
                ) from None
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]


# YAML 1.2 core schema: only true/false are booleans; timestamps are plain strings.
_OmkYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_OmkYamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_text(raw: bytes, *, path: str, yaml_format: bool) -> Any:
    """Decode and parse ``raw``; raise :class:`SampleFileError` with a clear reason on failure."""
    if len(raw) > MAX_FILE_BYTES:
        raise SampleFileError(
            path, f"file is {len(raw):,} bytes; sample files may be at most {MAX_FILE_BYTES:,} bytes"
        )
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SampleFileError(path, "file is UTF-16 encoded; save it as UTF-8")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SampleFileError(path, f"file is not valid UTF-8 (byte offset {exc.start})") from None
    if yaml_format:
        data = _parse_yaml(text, path)
    else:
        data = _parse_json(text, path)
    _check_depth(data, path)
    return data


def _parse_json(text: str, path: str) -> Any:
    if text.startswith("\ufeff"):
        raise SampleFileError(path, "file starts with a byte-order mark, which JSON does not allow")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise SampleFileError(path, f"invalid JSON: {exc.msg}", line=exc.lineno) from None
    except ValueError as exc:
        raise SampleFileError(path, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise SampleFileError(path, f"JSON nests deeper than {MAX_DEPTH} levels") from None


def _parse_yaml(text: str, path: str) -> Any:
    text = text.removeprefix("\ufeff")
    loader = _OmkYamlLoader(text)
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        reason = exc.problem or exc.context or "invalid YAML"
        raise SampleFileError(path, f"invalid YAML: {reason}", line=line) from None
    except yaml.YAMLError as exc:
        raise SampleFileError(path, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise SampleFileError(path, f"YAML nests deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


def _check_depth(data: Any, path: str) -> None:
    """Reject absurd nesting before validation recurses into it."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise SampleFileError(path, f"data nests deeper than {MAX_DEPTH} levels")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def yaml_line_of(text: str, json_path: list[str | int]) -> int | None:
    """The 1-based line of the YAML node at ``json_path`` (or its deepest existing ancestor)."""
    try:
        node = yaml.compose(text.removeprefix("\ufeff"), Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = node.start_mark.line + 1 if node is not None else None
    for part in json_path:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                # A missing or unknown key: point at the mapping that lacks or holds it.
                key = next((k for k, _ in node.value if getattr(k, "value", None) == part), None)
                return key.start_mark.line + 1 if key is not None else line
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line
