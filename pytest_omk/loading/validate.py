"""Validate parsed data against the v2 models and turn pydantic errors into short messages."""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from pytest_omk.errors import SampleFileError, format_path
from pytest_omk.loading.parsed import AmbiguousScalar
from pytest_omk.models import SCHEMA_VERSION, SampleSet
from pytest_omk.models._base import LocatedValueError

if TYPE_CHECKING:
    from pytest_omk.js.v8 import JsEngine

MAX_REPORTED_ERRORS = 5

JsonPath = tuple[str | int, ...]


def validate_document(data: Any, *, path: str, text: str | None, js: JsEngine | None = None) -> SampleSet:
    """Validate ``data`` (parsed from ``path``); ``text`` is the YAML source, for line numbers.

    ``js`` decides whether each ``regex`` compiles as JavaScript would (see ``models.assertions.text``).
    """
    _check_root(data, path)
    ambiguous: dict[JsonPath, AmbiguousScalar] = {}
    if text is not None:
        data = _plain_strings(data, (), ambiguous)
    try:
        document = SampleSet.model_validate(data, context={"js": js} if js is not None else None)
    except ValidationError as exc:
        raise _to_sample_file_error(exc, data, path=path, text=text, ambiguous=ambiguous) from None
    for at, scalar in ambiguous.items():
        if not _free_form(at):
            where = format_path(list(at))
            line = _yaml_line(text, list(at))
            raise SampleFileError(path, _ambiguity(scalar), where=where, line=line)
    return document


def _check_root(data: Any, path: str) -> None:
    declare = f'the file must be an object declaring "schemaVersion": "{SCHEMA_VERSION}"'
    if isinstance(data, list):
        raise SampleFileError(
            path, f'legacy top-level array is not supported: {declare} and a "samples" array', where="$"
        )
    if not isinstance(data, dict):
        raise SampleFileError(path, f"expected an object, got {_kind(data)}: {declare}", where="$")
    if "schemaVersion" not in data:
        raise SampleFileError(path, f"schemaVersion is missing: {declare}", where="schemaVersion")
    if data["schemaVersion"] != SCHEMA_VERSION:
        raise SampleFileError(
            path,
            f"unsupported schemaVersion {data['schemaVersion']!r}: expected {SCHEMA_VERSION!r}",
            where="schemaVersion",
        )


def _kind(value: Any) -> str:
    return {type(None): "null", bool: "a boolean", str: "a string", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


# --- YAML scalars that other readers type differently ----------------------------------------------


def _plain_strings(node: Any, at: JsonPath, found: dict[JsonPath, AmbiguousScalar]) -> Any:
    """Copy ``node`` with every :class:`AmbiguousScalar` made a plain ``str``, noting where each was."""
    if isinstance(node, AmbiguousScalar):
        found[at] = node
        return str(node)
    if isinstance(node, dict):
        copy: dict[Any, Any] = {}
        for key, value in node.items():
            plain_key = (
                _plain_strings(key, (*at, str(key)), found) if isinstance(key, AmbiguousScalar) else key
            )
            copy[plain_key] = _plain_strings(value, (*at, plain_key), found)
        return copy
    if isinstance(node, list):
        return [_plain_strings(item, (*at, index), found) for index, item in enumerate(node)]
    return node


def _free_form(at: JsonPath) -> bool:
    """Whether ``at`` lies inside a value the format takes as arbitrary JSON (no string required).

    Those are a ``json_schema`` assertion's ``schema``, a mock's ``return``/``return_seq`` and a
    mock's ``match.input``.
    """
    for i, part in enumerate(at):
        before = at[:i]
        if part == "schema" and len(before) >= 2 and before[-2] in ("assertions", "children"):
            return True
        if part in ("return", "return_seq") and len(before) >= 2 and before[-2] == "mocks":
            return True
        if part == "input" and len(before) >= 3 and before[-1] == "match" and before[-3] == "mocks":
            return True
    return False


def _ambiguity(scalar: AmbiguousScalar) -> str:
    if scalar.kind == "date":
        return (
            f"unquoted {scalar} is read as a date by YAML readers such as js-yaml (the format owner's); "
            f'quote it ("{scalar}") to mean the text'
        )
    return (
        f"unquoted {scalar} is a boolean in YAML 1.1 but a string in YAML 1.2, so readers disagree; "
        f'quote it ("{scalar}") to mean the text, or write true/false for a boolean'
    )


# --- pydantic errors -> one located message ---------------------------------------------------------


def _to_sample_file_error(
    exc: ValidationError,
    data: Any,
    *,
    path: str,
    text: str | None,
    ambiguous: dict[JsonPath, AmbiguousScalar],
) -> SampleFileError:
    grouped: dict[str, tuple[list[str | int], list[str]]] = {}
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, LocatedValueError):
            loc += cause.loc
        data_path = _data_path(
            loc, data, keep_last=error["type"] == "missing" or isinstance(cause, LocatedValueError)
        )
        where = format_path(data_path)
        message = _message(error, data_path)
        scalar = ambiguous.get(tuple(data_path))
        if scalar is not None:
            message += f" ({_ambiguity(scalar)})"
        entry = grouped.setdefault(where, (data_path, []))
        if message not in entry[1]:
            entry[1].append(message)
    items = list(grouped.items())
    # Report the deepest problem first: it is the most specific one.
    items.sort(key=lambda kv: -len(kv[1][0]))
    (where, (data_path, messages)), rest = items[0], items[1:MAX_REPORTED_ERRORS]
    reason = " or ".join(messages)
    if rest:
        reason += "".join(f"\n  also {w or '$'}: {' or '.join(m)}" for w, (_, m) in rest)
    line = _yaml_line(text, data_path)
    return SampleFileError(path, reason, where=where or "$", line=line)


def _data_path(loc: tuple[int | str, ...], data: Any, *, keep_last: bool) -> list[str | int]:
    """Map a pydantic ``loc`` onto the document, dropping union tags and model names."""
    result: list[str | int] = []
    node = data
    for position, part in enumerate(loc):
        if (
            isinstance(node, dict)
            and position > 0
            and isinstance(loc[position - 1], int)
            and isinstance(part, str)
            and node.get("type") == part
        ):
            # The tag pydantic adds right after an assertion's index (its discriminated-union member).
            continue
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            node = node[part]
            result.append(part)
        elif keep_last and position == len(loc) - 1 and isinstance(part, str):
            result.append(part)
    return result


# Keys of older omk formats, with what v2 expects instead.
_LEGACY_KEY_HINTS = {
    "dimensions": 'v1 "dimensions" are gone: make each one a rubric entry {"criterion": ..., "weight": ...}',
    "metadata": 'v2 has no "metadata" object: use capability, difficulty, construct, provenance or covers',
    "expectedTools": 'use a "tools_called" assertion instead',
}


def _message(error: Any, data_path: list[str | int]) -> str:
    kind = error["type"]
    msg: str = error["msg"]
    last = data_path[-1] if data_path else None
    if kind == "extra_forbidden":
        hint = _LEGACY_KEY_HINTS.get(last) if isinstance(last, str) else None
        return "unknown key (not part of the omk.eval-sample-set/v2 format)" + (f"; {hint}" if hint else "")
    if kind == "dict_type" and last == "rubric" and isinstance(error.get("input"), str):
        return (
            "a string rubric is the legacy format: write an object of named dimensions, "
            '{"<name>": {"criterion": "...", "weight": 1}}'
        )
    if kind == "missing":
        return "required key is missing"
    if kind == "union_tag_invalid":
        tag = error.get("ctx", {}).get("tag")
        expected = error.get("ctx", {}).get("expected_tags", "")
        close = difflib.get_close_matches(str(tag), re.findall(r"'([^']+)'", str(expected)), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return f"unknown assertion type {tag!r}; {hint}allowed types: {expected}"
    if kind == "union_tag_not_found":
        return 'an assertion needs a "type"'
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    return msg


def _yaml_line(text: str | None, json_path: list[str | int]) -> int | None:
    """The line of ``json_path`` in a YAML file's ``text`` (``None`` for JSON: no text is passed)."""
    if text is None:
        return None
    # Imported only when a YAML file's error is reported: JSON runs never import PyYAML.
    from pytest_omk.loading.yaml_nodes import yaml_line_of

    return yaml_line_of(text, json_path)
