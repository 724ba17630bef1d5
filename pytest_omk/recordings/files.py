"""The on-disk format of recordings: key, layout and atomic file writes.

One recorded call is one JSON file, readable in code review::

    <directory>/<kind>/<first 2 hex of key>/<label slug>-<first 16 hex of key>.json

The key is a SHA-256 over the canonical JSON of what changes the answer, so the label (the sample id)
only makes the file name readable: a lookup falls back to the key alone when the label changed.
:class:`~pytest_omk.recordings.store.RecordingStore` applies the record modes on top of this module.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import time
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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

TEMP_SUFFIX = ".tmp"
STALE_TEMP_SECONDS = 15 * 60
"""A temp file this old belongs to a killed writer: one write takes milliseconds, not minutes."""

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


def iter_recording_files(kind_dir: Path) -> Iterator[Path]:
    """Every recording file of one kind, temp files and strays skipped, in a stable order."""
    try:
        shards = sorted(p for p in kind_dir.iterdir() if p.is_dir())
    except OSError:
        return
    for shard in shards:
        try:
            names = sorted(os.listdir(shard))
        except OSError:
            continue
        for name in names:
            if name_hash(name) is not None:
                yield shard / name


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
    """Parse one recording; raise ``FileNotFoundError`` if absent, :class:`RecordingFileError` if unusable."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        raise
    except NotADirectoryError as exc:
        # A file where a directory should be: nothing is recorded there (writes will warn).
        raise FileNotFoundError(str(path)) from exc
    except OSError as exc:
        raise RecordingFileError(path, f"cannot be read ({exc.strerror or exc})") from exc
    return parse_document(path, raw)


def parse_document(path: str | Path, raw: bytes) -> Document:
    """Validate the bytes of a recording stored at ``path``; raise :class:`RecordingFileError` if unusable."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordingFileError(path, f"is not valid JSON ({exc})") from exc
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


# ---------------------------------------------------------------------------------------------
# Atomic writes


def write_atomic(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` so that readers see the old file or the new one, never a part.

    The temp file lives in the same directory (``os.replace`` is atomic only within one file
    system) and is fsynced first, so a crash after the rename cannot leave an empty file behind.
    Concurrent writers of the same key each rename their own temp file; the last one wins whole.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=TEMP_SUFFIX)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        _replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _replace(source: Path, target: Path) -> None:
    # Windows refuses to replace a file another process has open; such readers finish quickly.
    for attempt in range(5):
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if os.name != "nt" or attempt == 4:
                raise
            time.sleep(0.01 * (attempt + 1))


def sweep_stale_temps(directory: Path, *, now: float | None = None) -> int:
    """Delete temp files left by killed writers; fresh ones may belong to a live writer. Returns the count."""
    cutoff = (time.time() if now is None else now) - STALE_TEMP_SECONDS
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        if not (entry.name.startswith(".") and entry.name.endswith(TEMP_SUFFIX)):
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
    return removed
