"""Parse sample-file text (JSON or YAML) into plain Python data, safely.

JSON: ``NaN``/``Infinity`` and a byte-order mark are rejected (as JavaScript's ``JSON.parse`` does).

YAML is read the way the format's owner reads it (js-yaml 4, the YAML 1.2 core schema): only
``true``/``false`` are booleans, ``010`` is ten, ``1e3`` is a number, ``<<`` merges mappings.
Plain scalars that a YAML 1.1 reader such as PyYAML would type differently (``yes``/``no``/``on``/
``off``, dates) come back as :class:`AmbiguousScalar` strings; validation rejects them where the
format requires a string, so a file never means one thing here and another elsewhere. Duplicate keys
are rejected, and aliases may not expand the document by more than :data:`MAX_ALIAS_EXPANSION`
nodes (:mod:`.yaml_nodes`), so an alias bomb fails in milliseconds. libyaml's C parser is used when available. Line
numbers are looked up only when an error needs them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from pytest_omk.errors import SampleFileError, format_path
from pytest_omk.loading.yaml_nodes import check_aliases, path_to_mark

MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64
_MAX_SAFE_INTEGER = 2**53 - 1

_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_TAG_MERGE = "tag:yaml.org,2002:merge"
_TAG_YAML11_BOOL = "tag:pytest-omk,2026:yaml11-bool"
_TAG_DATE = "tag:pytest-omk,2026:date"


class AmbiguousScalar(str):
    """A plain YAML scalar kept as text that YAML 1.1 readers would turn into a boolean or a date."""

    kind: str = "YAML 1.1 boolean"
    """``"YAML 1.1 boolean"`` or ``"date"``: what another reader would make of it."""


class _DateScalar(AmbiguousScalar):
    kind = "date"


class _OmkYamlLoader(_Loader):  # type: ignore[misc]
    """Safe loader with the YAML 1.2 core schema (as js-yaml), merge keys and unique keys."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _TAG_MERGE:
                # Keys merged in with ``<<`` may be overridden by the mapping's own keys.
                continue
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

    def _typed_text(self, node: Any) -> str:
        """The scalar's text, checked against its tag's core-schema form.

        Implicitly typed scalars always match; an explicit tag such as ``!!bool "maybe"`` may not,
        and js-yaml refuses it, so it is an error here too, never a guess.
        """
        text = str(self.construct_scalar(node))
        if not _CORE_FORMS[node.tag].match(text):
            raise yaml.constructor.ConstructorError(
                None, None, f"{text!r} is not a valid !!{node.tag.rsplit(':', 1)[-1]} value", node.start_mark
            )
        return text

    def construct_yaml_null(self, node: Any) -> None:
        self._typed_text(node)

    def construct_yaml_bool(self, node: Any) -> bool:
        return self._typed_text(node) in ("true", "True", "TRUE")

    def construct_yaml_int(self, node: Any) -> int | float:
        text = self._typed_text(node)
        sign = -1 if text.startswith("-") else 1
        digits = text.lstrip("+-")
        base = {"0b": 2, "0o": 8, "0x": 16}.get(digits[:2], 10)
        try:
            value = sign * int(digits[2:] if base != 10 else digits, base)
        except ValueError:
            # Thousands of digits: Python refuses the conversion; JavaScript gets Infinity.
            return sign * float("inf")
        return _js_number(value)

    def construct_yaml_float(self, node: Any) -> float:
        text = self._typed_text(node).lower()
        sign = -1.0 if text.startswith("-") else 1.0
        body = text.lstrip("+-")
        if body == ".inf":
            return sign * float("inf")
        if body == ".nan":
            return float("nan")
        return sign * float(body)

    def construct_ambiguous(self, node: Any) -> AmbiguousScalar:
        text = str(self.construct_scalar(node))
        return _DateScalar(text) if node.tag == _TAG_DATE else AmbiguousScalar(text)


# The YAML 1.2 core schema as js-yaml 4 resolves it (checked in this order), plus the two kinds of
# ambiguous plain scalars. PyYAML's own resolvers (YAML 1.1) are dropped entirely.
_IMPLICIT: list[tuple[str, str, str]] = [
    ("tag:yaml.org,2002:null", r"~|null|Null|NULL|", "~nN"),
    ("tag:yaml.org,2002:bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
    ("tag:yaml.org,2002:int", r"[-+]?(?:0b[01]+|0o[0-7]+|0x[0-9a-fA-F]+|[0-9]+)", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
        "-+0123456789.",
    ),
    (_TAG_MERGE, r"<<", "<"),
    (_TAG_YAML11_BOOL, r"yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF", "yYnNoO"),
    (
        _TAG_DATE,
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
        r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
        r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?",
        "0123456789",
    ),
]
# Each tag's whole-scalar form: what an untagged scalar is resolved by, and what an explicitly
# tagged one is checked against (``_typed_text``).
_CORE_FORMS: dict[str, re.Pattern[str]] = {tag: re.compile(f"^(?:{pattern})$") for tag, pattern, _ in _IMPLICIT}
_OmkYamlLoader.yaml_implicit_resolvers = {}
for _tag, _, _first in _IMPLICIT:
    _OmkYamlLoader.add_implicit_resolver(_tag, _CORE_FORMS[_tag], list(_first))
# An empty plain scalar (``key:``) has no first character; PyYAML looks it up under "".
_OmkYamlLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile("^$"), [""])
_OmkYamlLoader.add_constructor("tag:yaml.org,2002:null", _OmkYamlLoader.construct_yaml_null)
_OmkYamlLoader.add_constructor("tag:yaml.org,2002:bool", _OmkYamlLoader.construct_yaml_bool)
_OmkYamlLoader.add_constructor("tag:yaml.org,2002:int", _OmkYamlLoader.construct_yaml_int)
_OmkYamlLoader.add_constructor("tag:yaml.org,2002:float", _OmkYamlLoader.construct_yaml_float)
_OmkYamlLoader.add_constructor(_TAG_YAML11_BOOL, _OmkYamlLoader.construct_ambiguous)
_OmkYamlLoader.add_constructor(_TAG_DATE, _OmkYamlLoader.construct_ambiguous)


def _js_number(value: int) -> int | float:
    """``value`` as JavaScript holds it: exact while safe, else the nearest double (or infinity)."""
    if abs(value) <= _MAX_SAFE_INTEGER:
        return value
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _json_int(text: str) -> int | float:
    # float() first for long literals: int() refuses more than 4300 digits, and the result would
    # become a double anyway.
    return _js_number(int(text)) if len(text) <= 20 else float(text)


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
    data = _parse_yaml(text, path) if yaml_format else _parse_json(text, path)
    _check_depth(data, path)
    return data


def _parse_json(text: str, path: str) -> Any:
    if text.startswith("\ufeff"):
        raise SampleFileError(path, "file starts with a byte-order mark, which JSON does not allow")
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise SampleFileError(path, f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno) from None
    except ValueError as exc:
        raise SampleFileError(path, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise SampleFileError(path, f"JSON nests deeper than {MAX_DEPTH} levels") from None


def _parse_yaml(text: str, path: str) -> Any:
    text = text.removeprefix("\ufeff")
    loader = _OmkYamlLoader(text)
    node: Any = None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "&" in text:  # no alias without an anchor: skip the walk for the usual anchor-free file
            check_aliases(node, path)
        return loader.construct_document(node)
    except yaml.reader.ReaderError as exc:
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
        raise SampleFileError(
            path,
            f"invalid YAML: character U+{char:04X} is not allowed ({exc.reason})",
            line=text.count("\n", 0, exc.position) + 1,
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark, reason = _yaml_mark(exc)
        if "nesting depth" in reason:  # libyaml >= 0.2.5 stops at 1,000 levels: say what we say below it
            reason = f"data nests deeper than {MAX_DEPTH} levels"
        where = None
        if mark is not None and node is not None:
            at = path_to_mark(node, mark)
            where = format_path(at) if at else None
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        raise SampleFileError(path, f"invalid YAML: {reason}", where=where, line=line, column=column) from None
    except yaml.YAMLError as exc:
        raise SampleFileError(path, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise SampleFileError(path, f"YAML nests deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


def _yaml_mark(exc: yaml.MarkedYAMLError) -> tuple[Any, str]:
    """Where a YAML syntax error is, and why, as the parser saw it.

    A token left open (a quote, a flow sequence) is reported where it starts, the parser's
    ``context_mark``: the problem mark is only where the parser gave up, often lines later. Other
    errors (a bad indentation inside a block mapping, say) are reported where they were found.
    """
    problem = exc.problem or exc.context or "invalid YAML"
    start, found = exc.context_mark, exc.problem_mark
    left_open = (exc.context or "").startswith(("while scanning", "while parsing a flow"))
    if left_open and start is not None and found is not None and (start.line, start.column) != (found.line, found.column):
        noticed = f"line {found.line + 1}, column {found.column + 1}"
        return start, f"{problem} ({exc.context} that starts here; noticed at {noticed})"
    return found or start, problem


def _check_depth(data: Any, path: str) -> None:
    """Reject absurd nesting before validation recurses into it (no value deeper than
    :data:`MAX_DEPTH` levels below the root).

    The walk goes one level at a time and keeps only containers: scalars, most of a document,
    are looked at once and never queued (half the time of a walk that queued every value with
    its depth, on a 10,000-sample file).
    """
    containers = (dict, list)  # a tuple: isinstance with ``dict | list`` is several times slower
    level: list[Any] = [data] if isinstance(data, containers) else []
    depth = 0
    while level:
        # A non-empty container at MAX_DEPTH holds a value one level deeper.
        if depth >= MAX_DEPTH and any(level):
            raise SampleFileError(path, f"data nests deeper than {MAX_DEPTH} levels")
        below: list[Any] = []
        for node in level:
            for value in node.values() if isinstance(node, dict) else node:
                if isinstance(value, containers):
                    below.append(value)
        level = below
        depth += 1
