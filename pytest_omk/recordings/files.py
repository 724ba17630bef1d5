"""The on-disk format of recordings: key, layout, and what a readable file must be.

One recorded call is one JSON file, readable in code review::

    <directory>/<kind>/<first 2 hex of key>/<label slug>-<first 16 hex of key>.json

The key is a SHA-256 over the canonical JSON of what changes the answer, so the label (the sample id)
only makes the file name readable: a lookup falls back to the key alone when the label changed.
:class:`~pytest_omk.recordings.store.RecordingStore` applies the record modes on top of this module.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_omk._util.regular_files import RefusedFile, read_regular
from pytest_omk._util.visible import json_visible

# The secret rules live in the one scrubber; these names stay importable from here.
from pytest_omk.recordings.scrub import MIN_SECRET_LENGTH as MIN_SECRET_LENGTH
from pytest_omk.recordings.scrub import REDACTED as REDACTED
from pytest_omk.recordings.scrub import SECRET_ENV_NAMES as SECRET_ENV_NAMES
from pytest_omk.recordings.scrub import SECRET_ENV_SUFFIXES as SECRET_ENV_SUFFIXES
from pytest_omk.recordings.scrub import SENSITIVE_KEYS as SENSITIVE_KEYS
from pytest_omk.recordings.scrub import secrets_from_env as secrets_from_env

FORMAT = "pytest-omk.recording/v1"
"""Stored in every file and hashed into every key: a new format never replays an old file."""

RESERVED_FIELDS = frozenset({"format", "key", "kind", "label", "file", "result", "recordedAt"})
"""Top-level document fields that an identity may not use."""

MAX_FILE_BYTES = 64 * 1024 * 1024
"""Largest recording read (or written); a larger file is unusable (docs/recording.md)."""
MAX_DEPTH = 64
"""Deepest nesting of a recording's JSON (a tool call's input nests a few levels, not hundreds)."""

_KIND_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
_SLUG_DROP_RE = re.compile(r"[^a-z0-9._-]+")
_SLUG_MAX = 60
_HASH_IN_NAME = 16


class RecordingFileError(Exception):
    """A recording exists but cannot be used (unreadable, not JSON, wrong format or key)."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


# ---------------------------------------------------------------------------------------------
# Key and layout


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, ASCII escapes: one text per value, whatever the platform."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def recording_key(kind: str, identity: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the format version, the kind and the identity's fields."""
    return hashlib.sha256(canonical_json({"format": FORMAT, "kind": kind, **identity}).encode()).hexdigest()


def check_kind(kind: str) -> None:
    """Kinds become directory names, so they are short lower-case words."""
    if not _KIND_RE.match(kind):
        raise ValueError(f"recording kind {kind!r} must match {_KIND_RE.pattern}")


def check_identity(identity: Mapping[str, Any]) -> None:
    """Identity fields sit beside the document's own fields, so they may not shadow them."""
    clash = RESERVED_FIELDS.intersection(identity)
    if clash:
        raise ValueError(f"identity fields {sorted(clash)} are reserved by the recording format")


def slugify(label: str, secrets: Iterable[str] = ()) -> str:
    """A file-name-safe, lower-case ASCII rendering of ``label`` (never empty, at most 60 chars).

    Lower case keeps case-insensitive file systems (macOS, Windows) from merging two names; the
    key hash after the slug keeps distinct calls apart anyway. Any of ``secrets`` that the slug
    would spell (slugged the same way: a label with the key in capitals, in full-width letters or
    with a zero-width space inside escapes a plain scrubber) becomes ``redacted``.
    """
    slug = _slug_text(label)
    for secret in secrets:
        spelled = _slug_text(secret).strip("-._")
        if len(spelled) >= MIN_SECRET_LENGTH:
            slug = slug.replace(spelled, "redacted")
    slug = slug[:_SLUG_MAX].strip("-._")
    # A leading dot would hide the file and collide with our temp-file prefix.
    return slug or "call"


def _slug_text(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return _SLUG_DROP_RE.sub("-", ascii_text.lower())


def shard_dir(directory: Path, kind: str, key: str) -> Path:
    """``<directory>/<kind>/<2 hex>``: keeps each directory small for git and file browsers."""
    return directory / kind / key[:2]


def file_name(label: str, key: str, secrets: Iterable[str] = ()) -> str:
    """``<slug>-<16 hex>.json``, no spelling of ``secrets`` in the slug (:func:`slugify`)."""
    return slugged_name(slugify(label, secrets), key)


def slugged_name(slug: str, key: str) -> str:
    """:func:`file_name` from a slug already made (a store reuses a label's slug for its calls)."""
    return f"{slug}-{key[:_HASH_IN_NAME]}.json"


def name_hash(name: str) -> str | None:
    """The 16-hex key prefix in a recording's file name, ``None`` for anything else."""
    if name.startswith(".") or not name.endswith(".json"):
        return None
    stem = name.removesuffix(".json")
    tail = stem.rpartition("-")[2]
    return tail if len(tail) == _HASH_IN_NAME and all(c in "0123456789abcdef" for c in tail) else None


# ---------------------------------------------------------------------------------------------
# Documents


@dataclass(slots=True)
class Document:
    """A parsed, validated recording file."""

    where: str | Path
    """Where it was read: a replay's lookups read by plain string (see :attr:`path`)."""
    key: str
    kind: str
    label: str
    identity: dict[str, Any]
    result: dict[str, Any]
    file: str | None = None
    """The sample file the call was made for, relative to the recordings directory (not in the key)."""

    @property
    def path(self) -> Path:
        """The file, as a path. A replay reads every recording by its string name: joining and
        parsing ``pathlib`` paths was about a tenth of the call thread's work (a 10,000-sample
        replay reads 35,000 files), and only an unusable file or a miss needs the path itself."""
        return self.where if isinstance(self.where, Path) else Path(self.where)


def build_document(
    kind: str,
    key: str,
    label: str,
    identity: Mapping[str, Any],
    payload: Mapping[str, Any],
    file: str | None = None,
) -> dict[str, Any]:
    """The stored JSON object, in reading order: what was asked, then what came back, then when."""
    return {
        "format": FORMAT,
        "key": key,
        "kind": kind,
        "label": label,
        **({"file": file} if file else {}),
        **identity,
        "result": dict(payload),
        "recordedAt": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def render(document: Mapping[str, Any]) -> bytes:
    """Indented UTF-8 JSON with a final newline, so diffs stay line-based; control, bidi and
    invisible characters as JSON escapes, so a reviewer's diff shows them."""
    try:
        text = json_visible(json.dumps(document, indent=2, ensure_ascii=False))
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates (from a broken decoder upstream) cannot be UTF-8: escape everything.
        return (json.dumps(document, indent=2, ensure_ascii=True) + "\n").encode("ascii")


def read_document(path: str | Path) -> Document:
    """Parse one recording; raise ``FileNotFoundError`` if absent, :class:`RecordingFileError` if unusable.

    Regular files only, never through a final link, at most :data:`MAX_FILE_BYTES` (a committed
    recording is hostile: a link to ``/dev/zero``, a FIFO, a huge file).
    """
    try:
        raw = read_regular(path, MAX_FILE_BYTES)
    except RefusedFile as exc:
        raise RecordingFileError(path, exc.reason) from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise RecordingFileError(path, f"cannot be read ({exc.strerror or exc})") from exc
    return parse_document(path, raw)


def parse_document(path: str | Path, raw: bytes) -> Document:
    """Validate the bytes of a recording stored at ``path``; raise :class:`RecordingFileError` if unusable."""
    data = _parse_json(path, raw)
    if not isinstance(data, dict):
        raise RecordingFileError(path, "is not a JSON object")
    fmt = data.get("format")
    if fmt != FORMAT:
        raise RecordingFileError(path, f"has format {fmt!r}; this pytest-omk reads {FORMAT!r} only")
    key, kind, label, result = (data.get(f) for f in ("key", "kind", "label", "result"))
    if not isinstance(key, str) or not isinstance(kind, str) or not isinstance(result, dict):
        raise RecordingFileError(path, 'lacks a string "key"/"kind" or an object "result"')
    identity = {k: v for k, v in data.items() if k not in RESERVED_FIELDS}
    file = data.get("file")
    label = label if isinstance(label, str) else ""
    return Document(path, key, kind, label, identity, result, file if isinstance(file, str) else None)


class _NotFinite(ValueError):
    """A number that is not finite (``NaN``, ``Infinity``, ``1e400``)."""


def _refuse_constant(name: str) -> float:
    raise _NotFinite(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(text)
    return value


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite)
"""Made once: ``json.loads`` with callbacks would build a decoder for every file."""


def _parse_json(path: str | Path, raw: bytes) -> Any:
    """JSON with finite numbers only, nested at most :data:`MAX_DEPTH` levels."""
    try:
        data = _DECODER.decode(raw.decode("utf-8"))
    except _NotFinite as exc:
        # Rare, so it may cost a second parse: say where the number is.
        where = _non_finite_at(json.loads(raw))
        raise RecordingFileError(path, f"holds a number that is not finite ({exc}) at {where}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordingFileError(path, f"is not valid JSON ({exc})") from exc
    except RecursionError:
        raise RecordingFileError(path, f"nests deeper than {MAX_DEPTH} levels") from None
    if _too_deep(data, MAX_DEPTH):
        raise RecordingFileError(path, f"nests deeper than {MAX_DEPTH} levels")
    return data


def _too_deep(data: Any, limit: int) -> bool:
    """Whether a parsed JSON value nests containers more than ``limit`` levels (walked level by level)."""
    level = [data] if type(data) in (dict, list) else []
    depth = 0
    while level:
        if depth >= limit and any(level):
            return True
        below: list[Any] = []
        for node in level:
            # ``type(...) in`` over ``isinstance``: this walk runs for every recording a replay reads.
            for value in node.values() if type(node) is dict else node:
                if type(value) in (dict, list):
                    below.append(value)
        level = below
        depth += 1
    return False


def _non_finite_at(data: Any, where: str = "") -> str:
    """Where the first non-finite number of ``data`` is (``result.costUSD``), for the error message."""
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        at = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else str(key)
        if isinstance(value, float) and not math.isfinite(value):
            return at
        found = _non_finite_at(value, at)
        if found:
            return found
    return ""
