"""Reading one ``--omk-report`` file handed in from elsewhere: hostile input, validated whole.

A report given to ``python -m pytest_omk merge`` or ``render``, or read as ``--omk-baseline``, may be
a fork's pull-request artifact: any value can be of any type, any number ``NaN`` or infinite (Python's
``json`` reads ``NaN``, ``Infinity`` and ``1e999``), any string markup. Every reader of such a file
goes through here, so each refuses the same things with the same one line (a :class:`ConfigError`
naming the file and the field, a usage error): the samples, ``config`` and ``summary`` through the
models that write them (strictly: a string is never read as a number), the other sections through
the shipped JSON Schema (generated from the same models and the hand-written frame).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pytest_omk._util.visible import visible
from pytest_omk.errors import ConfigError
from pytest_omk.models.report import SampleRecord
from pytest_omk.models.report_document import ReportConfig, ReportSummary
from pytest_omk.models.report_schema import RELATIVE_PATH

REPORT_SCHEMA_VERSION = "pytest-omk.report/v1"
MAX_DEPTH = 64
"""A report nests a dozen levels; anything far deeper is not one (and would exhaust the stack)."""
_SHOWN = 120
"""The most characters of a refused value's description an error line shows."""


def read_report(path: Path) -> dict[str, Any]:
    """The JSON document at ``path`` if it claims to be a report and holds only finite numbers;
    :class:`ConfigError` naming the file (and the field of a non-finite number) otherwise."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not JSON (line {exc.lineno}: {exc.msg})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text") from None
    except RecursionError:
        raise ConfigError(f"{path} is nested too deeply to be a pytest-omk report") from None
    if nesting(document) > MAX_DEPTH:
        raise ConfigError(f"{path} is nested deeper than {MAX_DEPTH} levels: not a pytest-omk report")
    if not isinstance(document, dict) or document.get("schemaVersion") != REPORT_SCHEMA_VERSION:
        raise ConfigError(
            f"{path} is not a pytest-omk report (schemaVersion must be {REPORT_SCHEMA_VERSION!r})"
        )
    bad = non_finite(document)
    if bad is not None:
        where, value = bad
        raise ConfigError(f"{path}: {where}: {value} is not a finite number (JSON has no such numbers)")
    return document


def read_valid_report(path: Path) -> dict[str, Any]:
    """The report at ``path``, every part of it validated (:func:`validate_report`), its samples as
    the record model writes them (a key an older writer left out is there with its default)."""
    document = read_report(path)
    return {**document, "samples": [record.reported() for record in validate_report(path, document)]}


def validate_report(path: Path, document: dict[str, Any]) -> list[SampleRecord]:
    """Refuse a report any part of which its writer could not have written (:class:`ConfigError`);
    returns its samples' records."""
    _check_model(path, ReportConfig, document.get("config"), "config")
    _check_model(path, ReportSummary, document.get("summary"), "summary")
    samples = document.get("samples")
    if not isinstance(samples, list):
        raise ConfigError(f"{path}: samples must be a list, not {_kind(samples)}")
    records = check_records(path, samples)
    # The rest (run fields, variants, comparisons, baseline, coverage) against the shipped schema;
    # the samples are left out of it: the models above read them faster and say the same.
    errors = sorted(_validator().iter_errors({**document, "samples": []}), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = field_path(list(first.absolute_path)) or "the document"
        raise ConfigError(f"{path}: {where}: {_shown(first.message)}")
    return records


def check_records(path: Path, samples: Sequence[Any], section: str = "samples") -> list[SampleRecord]:
    """Every entry of ``samples`` as a record (read strictly), or :class:`ConfigError` naming the
    file, the entry and its field."""
    records: list[SampleRecord] = []
    for index, sample in enumerate(samples):
        where = f"{section}[{index}]"
        if not isinstance(sample, dict):
            raise ConfigError(f"{path}: {where} must be an object")
        try:
            records.append(SampleRecord.model_validate(sample, strict=True))
        except ValidationError as exc:
            raise ConfigError(f"{path}: {_model_error(where, sample, exc)}") from None
    return records


def _check_model(path: Path, model: type[BaseModel], value: Any, where: str) -> None:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {where} must be an object, not {_kind(value)}")
    try:
        model.model_validate(value, strict=True)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {_model_error(where, value, exc)}") from None


def _model_error(where: str, value: Any, exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    # pydantic's location goes on into a union's member names ("int", "float"): keep the part that
    # names keys of the value.
    parts: list[str | int] = []
    current = value
    for part in first["loc"]:
        if (isinstance(current, dict) and part in current) or (
            isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        ):
            parts.append(part)
            current = current[part]  # type: ignore[index]
        else:
            break
    if first["type"] == "missing" and first["loc"]:
        parts.append(first["loc"][len(parts)])
    shown = f"{where}.{field_path(parts)}" if parts else where
    # A union (a number: int or float) fails once per member, at the member's location.
    said = [e["msg"] for e in errors if tuple(e["loc"][: len(parts)]) == tuple(parts)]
    said = [said[0]] + [m.removeprefix("Input should be ") for m in said[1:] if m != said[0]]
    return f"{shown}: {_shown(' or '.join(said))}"


def field_path(parts: Sequence[str | int]) -> str:
    """``["samples", 0, "scores"]`` as ``samples[0].scores`` (hostile key names made visible)."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return _shown(text)


def _shown(text: str) -> str:
    cut = text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
    return visible(cut.replace("\n", " "))


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", type(None): "null"}.get(type(value), type(value).__name__)


def nesting(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (iteratively: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict | list):
            deepest = max(deepest, depth)
            if depth <= MAX_DEPTH:
                stack.extend(
                    (child, depth + 1)
                    for child in (current.values() if isinstance(current, dict) else current)
                )
    return deepest


def non_finite(document: Any) -> tuple[str, float] | None:
    """Where the first ``NaN`` or infinite number of ``document`` is, and the number (or ``None``)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:
        current, where = stack.pop()
        if isinstance(current, float) and not math.isfinite(current):
            return field_path(where) or "the document", current
        if isinstance(current, dict):
            stack.extend((child, (*where, str(key))) for key, child in reversed(current.items()))
        elif isinstance(current, list):
            stack.extend((child, (*where, index)) for index, child in reversed(list(enumerate(current))))
    return None


def _validator() -> Any:
    # Imported here: jsonschema is needed only when a whole report file is read.
    from jsonschema import Draft202012Validator

    schema_file = Path(__file__).resolve().parents[1] / RELATIVE_PATH
    return Draft202012Validator(json.loads(schema_file.read_text(encoding="utf-8")))
