"""One recordings directory from the shards' own: ``python -m pytest_omk merge --recordings …``.

Each recording shard of a CI matrix writes the calls it made into its own directory; the union of
those directories is what the next replay of the whole suite needs. Every input is hostile (an
artifact another job uploaded): each directory is read through :class:`RecordingTree` (regular
files only, never through a link, nothing outside the directory, at most ``MAX_FILE_BYTES`` each,
every file a valid recording), a file must sit where its own key puts it, and two files holding
different answers under one key are refused (:class:`UnionConflict`, naming both) rather than one
silently winning. The same answer recorded twice (the same call made by two shards) is kept once;
timing fields do not make two answers different.

Nothing is written until every input has been read and checked: a refused union leaves the output
directory as it was. Files are written atomically, confined to the output directory.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_omk._util.regular_files import RefusedFile, read_regular
from pytest_omk.recordings.files import (
    MAX_FILE_BYTES,
    RecordingFileError,
    canonical_json,
    name_hash,
    parse_document,
)
from pytest_omk.recordings.tree import OUTSIDE, RecordingTree

TIMING_FIELDS = frozenset({"latencyMs", "durationApiMs", "durationMs", "retries"})
"""Result fields that say how the call went, not what it answered."""


class UnionError(Exception):
    """An input that cannot be merged (one line naming the file and what is wrong)."""


class UnionConflict(UnionError):
    """Two different answers under one key."""


@dataclass(frozen=True)
class _Entry:
    root: Path
    path: Path
    relative: Path
    answer: str


@dataclass(frozen=True)
class UnionResult:
    """What the union did: recordings written, duplicates dropped, per input directory."""

    written: int
    duplicates: int
    inputs: int


def _answer(result: dict[str, object]) -> str:
    """The answer's digest: the result without its timing fields, in one spelling."""
    kept = {k: v for k, v in result.items() if k not in TIMING_FIELDS}
    return hashlib.sha256(canonical_json(kept).encode()).hexdigest()


def _entries(directory: Path) -> list[tuple[str, _Entry]]:
    """``(key, entry)`` for every recording under ``directory``, each checked."""
    if directory.is_symlink() or not directory.is_dir():
        raise UnionError(f"--recordings {directory}: not a directory (a link is not followed)")
    _refuse_links(directory)
    tree = RecordingTree(directory)
    found = []
    for kind in tree.kinds():
        for path in tree.files(kind):
            try:
                document = tree.read(path)
            except (RecordingFileError, OSError) as exc:
                raise UnionError(f"--recordings {directory}: {exc}") from None
            # Where the store would look for this key, so a file cannot stand in for another call.
            if (
                document.kind != kind
                or path.parent.name != document.key[:2]
                or (name_hash(path.name) != document.key[:16])
            ):
                raise UnionError(
                    f"--recordings {directory}: {path} is not where its key puts it (kind {document.kind!r}, "
                    f"key {document.key[:16]}…): refused"
                )
            relative = path.relative_to(directory)
            found.append(
                (f"{kind}/{document.key}", _Entry(directory, path, relative, _answer(document.result)))
            )
    return found


def _refuse_links(directory: Path) -> None:
    """A link anywhere in an input is refused, not skipped: what it stands for would go missing."""
    for parent, dirs, files in os.walk(directory, followlinks=False):
        for name in (*dirs, *files):
            if os.path.islink(os.path.join(parent, name)):
                raise UnionError(
                    f"--recordings {directory}: {os.path.join(parent, name)} is a symbolic link "
                    "(links are not followed: copy the file itself)"
                )


def union_recordings(sources: Sequence[Path], target: Path) -> UnionResult:
    """Write the union of the recordings in ``sources`` (and those already in ``target``) to ``target``.

    Raises :class:`UnionConflict` for two answers under one key, :class:`UnionError` for an unusable
    input; nothing is written then.
    """
    chosen: dict[str, _Entry] = {}
    duplicates = 0
    existing = _entries(target) if target.is_dir() else []
    for source in sources:
        for key, entry in _entries(source):
            seen = chosen.get(key)
            if seen is None:
                chosen[key] = entry
                continue
            if seen.answer != entry.answer:
                raise UnionConflict(
                    f"two different answers under one key ({key.partition('/')[0]} {key.partition('/')[2][:16]}…): "
                    f"{seen.path} and {entry.path}; keep one (delete the other) and merge again"
                )
            duplicates += 1
    for key, entry in existing:
        seen = chosen.pop(key, None)
        if seen is not None and seen.answer != entry.answer:
            raise UnionConflict(
                f"two different answers under one key: {entry.path} (already in --recordings-out) and "
                f"{seen.path}; keep one (delete the other) and merge again"
            )
    return UnionResult(_write(chosen, target), duplicates, len(sources))


def _write(chosen: dict[str, _Entry], target: Path) -> int:
    tree = RecordingTree(target)
    target.mkdir(parents=True, exist_ok=True)
    for entry in chosen.values():
        # Read once more and checked again: the bytes written are the recording that was checked.
        try:
            if not RecordingTree(entry.root).contains(entry.path.parent):
                raise RecordingFileError(entry.path, OUTSIDE)
            raw = read_regular(entry.path, MAX_FILE_BYTES)
            document = parse_document(entry.path, raw)
            if _answer(document.result) != entry.answer:
                raise RecordingFileError(entry.path, "changed while it was merged: merge again")
            tree.write(target / entry.relative, raw)
        except RefusedFile as exc:
            raise UnionError(f"{entry.path}: {exc.reason}") from None
        except (RecordingFileError, OSError) as exc:
            raise UnionError(str(exc)) from None
    return len(chosen)
