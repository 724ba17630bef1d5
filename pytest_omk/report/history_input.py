"""Reading the reports of ``render --history``: hostile input, one file at a time.

Each file is read only if it is a regular file, not through a symbolic link (a link to
``/dev/zero`` would be read until memory ran out, a FIFO would block), of at most
:data:`MAX_REPORT_BYTES`; then parsed, checked as ``merge`` checks a shard's report (its sections'
and run fields' types, :mod:`pytest_omk.report.shard_checks`), and its samples validated strictly
against the part of the record the trend reads (:class:`pytest_omk.models.history.HistorySample`:
no coercion, scores within 1..5). JSON's non-standard ``NaN`` and ``Infinity`` are refused wherever
they are; a number too large to be finite (``1e999`` reads as infinity) is refused where the trend
reads it: every value it reads is bounded (scores 1..5, pass rates 0..1). Checking every float of a
report instead would cost a tenth of reading it, for values nothing uses. Only the compact form of
each run is kept (:class:`pytest_omk.compare.history.History`), never the parsed document.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_omk._util.regular_files import RefusedFile, read_regular
from pytest_omk.compare.history import History
from pytest_omk.errors import ConfigError
from pytest_omk.loading.report_file import REPORT_SCHEMA_VERSION, field_path
from pytest_omk.models.history import HistorySample
from pytest_omk.report.shard_checks import check_shard

MAX_REPORT_BYTES = 512 * 1024 * 1024
"""The largest report read (a run of 10,000 samples writes tens of megabytes; parsed, a file takes
several times its size in memory)."""


class _Refused(ValueError):
    """A JSON constant no report holds (``NaN``, ``Infinity``)."""


def _no_constants(name: str) -> Any:
    raise _Refused(name)


def read_history(paths: Sequence[Path]) -> History:
    """Every report at ``paths``, compacted; :class:`ConfigError` naming the file and field otherwise."""
    if not paths:
        raise ConfigError("--history needs at least one report")
    seen: dict[Path, Path] = {}
    history = History()
    for path in paths:
        resolved = path.resolve()
        if resolved in seen:
            raise ConfigError(f"{path} is given twice (as {seen[resolved]} too)")
        seen[resolved] = path
        document = load_document(path)
        started, text = started_at(path, document)
        history.add_run(
            path=str(path),
            started=started,
            started_text=text,
            digest=collection_digest(path, document),
            samples=_samples(path, document["samples"]),
        )
        del document  # only the compact run is kept
    return history


def load_document(path: Path) -> dict[str, Any]:
    """A report document from ``path``, its sections and run fields of the right types."""
    try:
        document = json.loads(read_regular(path, MAX_REPORT_BYTES), parse_constant=_no_constants)
    except RefusedFile as exc:
        raise ConfigError(f"{path} {exc.reason}: not read") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except _Refused as exc:
        raise ConfigError(
            f"{path} holds {exc}, which is not a JSON number: not a pytest-omk report"
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not JSON (line {exc.lineno}: {exc.msg})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text") from None
    except RecursionError:
        raise ConfigError(f"{path} is nested too deeply to be a pytest-omk report") from None
    except ValueError as exc:  # an integer with more digits than Python converts
        raise ConfigError(f"{path} holds a number pytest-omk does not read ({exc})") from None
    if not isinstance(document, dict) or document.get("schemaVersion") != REPORT_SCHEMA_VERSION:
        raise ConfigError(
            f"{path} is not a pytest-omk report (schemaVersion must be {REPORT_SCHEMA_VERSION!r})"
        )
    check_shard(path, document)
    return document


def started_at(path: Path, document: dict[str, Any]) -> tuple[datetime, str]:
    """When the run started (UTC when the text has no offset), and the text as written."""
    if "startedAt" not in document:
        raise ConfigError(f"{path}: startedAt is missing (written by an older pytest-omk?): cannot place it")
    text = document["startedAt"]
    try:
        started = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{path}: startedAt must be an ISO 8601 time, not {text[:40]!r}") from None
    return (started if started.tzinfo else started.replace(tzinfo=UTC)), text


def collection_digest(path: Path, document: dict[str, Any]) -> str | None:
    """The report's ``collection.digest`` (``None`` when the report has no ``collection``)."""
    collection = document.get("collection")
    if collection is None:
        return None
    digest = collection.get("digest") if isinstance(collection, dict) else None
    if not isinstance(digest, str) or len(digest) > 200:
        raise ConfigError(f"{path}: collection.digest must be a string of at most 200 characters")
    return digest


def _samples(path: Path, rows: list[Any]) -> Iterator[HistorySample]:
    for index, row in enumerate(rows):
        try:
            yield HistorySample.model_validate(row, strict=True)
        except ValidationError as exc:
            first = exc.errors()[0]
            parts, message = _where(row, first["loc"], first["type"]), first["msg"]
            if first["loc"][len(parts) :] in (("int",), ("float",)):
                message = "Input should be a number"  # pydantic names the union member it tried first
            seen = repr(first.get("input"))
            seen = seen if len(seen) <= 40 else seen[:39] + "…"
            where = field_path(["samples", index, *parts])  # the shared reader's spelling
            raise ConfigError(f"{path}: {where}: {message} (found {seen})") from None


def _where(row: Any, loc: tuple[int | str, ...], kind: str) -> list[int | str]:
    """The part of pydantic's error location that is a path in ``row`` (a missing key's included)."""
    parts: list[int | str] = []
    node = row
    for part in loc:
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            parts.append(part)
            node = node[part]  # type: ignore[index]
            continue
        if kind == "missing":
            parts.append(part)
        break
    return parts
