"""Parse sample-file text (JSON or YAML) into plain Python data, safely.

JSON: ``NaN``/``Infinity`` and a byte-order mark are rejected (as JavaScript's ``JSON.parse`` does).

YAML is read the way the format's owner reads it (js-yaml 4, the YAML 1.2 core schema): only
``true``/``false`` are booleans, ``010`` is ten, ``1e3`` is a number, ``<<`` merges mappings.
Plain scalars that a YAML 1.1 reader such as PyYAML would type differently (``yes``/``no``/``on``/
``off``, dates) come back as :class:`~.parsed.AmbiguousScalar` strings; validation rejects them where the
format requires a string, so a file never means one thing here and another elsewhere. Duplicate keys
are rejected, and aliases may not expand the document by more than :data:`MAX_ALIAS_EXPANSION`
nodes (:mod:`.yaml_nodes`), so an alias bomb fails in milliseconds. The YAML reader is :mod:`.yaml_parse`.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_omk.errors import SampleFileError
from pytest_omk.loading.parsed import MAX_DEPTH, js_number

MAX_FILE_BYTES = 32 * 1024 * 1024


def _json_int(text: str) -> int | float:
    # float() first for long literals: int() refuses more than 4300 digits, and the result would
    # become a double anyway.
    return js_number(int(text)) if len(text) <= 20 else float(text)


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
        # PyYAML is imported for the first YAML file only: a JSON-only run never pays for it.
        from pytest_omk.loading.yaml_parse import parse_yaml

        data = parse_yaml(text, path)
    else:
        data = _parse_json(text, path)
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
