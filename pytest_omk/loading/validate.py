"""Validate parsed data against the v2 models and turn pydantic errors into short messages."""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from pytest_omk.errors import SampleFileError
from pytest_omk.loading.parse import yaml_line_of
from pytest_omk.models import SCHEMA_VERSION, SampleSet

MAX_REPORTED_ERRORS = 5
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def validate_document(data: Any, *, path: str, text: str | None) -> SampleSet:
    """Validate ``data`` (parsed from ``path``); ``text`` is the YAML source, for line numbers."""
    _check_root(data, path)
    try:
        return SampleSet.model_validate(data)
    except ValidationError as exc:
        raise _to_sample_file_error(exc, data, path=path, text=text) from None


def _check_root(data: Any, path: str) -> None:
    declare = f'the file must be an object declaring "schemaVersion": "{SCHEMA_VERSION}"'
    if isinstance(data, list):
        raise SampleFileError(
            path, f"legacy top-level array is not supported: {declare} and a \"samples\" array", where="$"
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


def _to_sample_file_error(exc: ValidationError, data: Any, *, path: str, text: str | None) -> SampleFileError:
    grouped: dict[str, tuple[list[str | int], list[str]]] = {}
    for error in exc.errors(include_url=False):
        data_path = _data_path(error["loc"], data, keep_last=error["type"] == "missing")
        where = format_path(data_path)
        message = _message(error)
        entry = grouped.setdefault(where, (data_path, []))
        if message not in entry[1]:
            entry[1].append(message)
    items = list(grouped.items())
    # Report the deepest problem first: it is the most specific one.
    items.sort(key=lambda kv: -len(kv[1][0]))
    (where, (data_path, messages)), rest = items[0], items[1 : MAX_REPORTED_ERRORS]
    reason = " or ".join(messages)
    if rest:
        reason += "".join(f"\n  also {w}: {' or '.join(m)}" for w, (_, m) in rest)
    line = yaml_line_of(text, data_path) if text is not None else None
    return SampleFileError(path, reason, where=where or "$", line=line)


def _data_path(loc: tuple[int | str, ...], data: Any, *, keep_last: bool) -> list[str | int]:
    """Map a pydantic ``loc`` onto the document, dropping union tags and model names."""
    result: list[str | int] = []
    node = data
    for position, part in enumerate(loc):
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            node = node[part]
            result.append(part)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
            result.append(part)
        elif keep_last and position == len(loc) - 1 and isinstance(part, str):
            result.append(part)
    return result


def format_path(parts: list[str | int]) -> str:
    """``["samples", 3, "assertions", 0, "weight"]`` -> ``samples[3].assertions[0].weight``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


def _message(error: Any) -> str:
    kind = error["type"]
    msg: str = error["msg"]
    if kind == "extra_forbidden":
        return "unknown key (not part of the omk.eval-sample-set/v2 format)"
    if kind == "missing":
        return "required key is missing"
    if kind == "union_tag_invalid":
        tag = error.get("ctx", {}).get("tag")
        expected = error.get("ctx", {}).get("expected_tags", "")
        return f"unknown assertion type {tag!r}; allowed types: {expected}"
    if kind == "union_tag_not_found":
        return 'an assertion needs a "type"'
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    return msg
