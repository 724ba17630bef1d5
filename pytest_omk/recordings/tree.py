"""Every file operation under a recordings directory, none of them through a link that leaves it.

A committed recordings tree is hostile input (docs/security.md): a shard directory may be a link to
somewhere else, a recording a link to ``/dev/zero`` or to a file outside, a FIFO or a huge file.
:class:`RecordingTree` reads, lists, writes, sweeps and deletes only where the real path of the
directory lies inside the real path of the tree, and reads regular files only, never through a
final link, at most :data:`MAX_FILE_BYTES` (:func:`pytest_omk._util.regular_files.read_regular`).
Listings skip links altogether, so a cleanup never follows one.

Writes are atomic (a temp file in the same directory, fsynced, then renamed): readers see the old
file or the new one, never a part; temp files of killed writers are swept after a while.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from pytest_omk.recordings.files import MAX_FILE_BYTES, Document, RecordingFileError, name_hash, read_document

TEMP_SUFFIX = ".tmp"
STALE_TEMP_SECONDS = 15 * 60
"""A temp file this old belongs to a killed writer: one write takes milliseconds, not minutes."""
OUTSIDE = "leads outside the recordings directory (a directory on its way is a link to elsewhere)"


class RecordingTree:
    """The recordings under ``root``: confined reads, listings, writes and deletes. Thread-safe."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._real_root: str | None = None
        self._inside: dict[str, bool] = {}

    def contains(self, directory: str | Path) -> bool:
        """Whether ``directory``'s real path (links resolved) is the tree's or below it.

        Known per directory once: a run reads 256 shard directories per kind, thousands of files.
        """
        key = str(directory)
        known = self._inside.get(key)
        if known is not None:
            return known
        real = os.path.realpath(key)
        root = self._real_root or os.path.realpath(self.root)
        inside = real == root or real.startswith(root.rstrip(os.sep) + os.sep)
        with self._lock:
            self._real_root = root
            self._inside[key] = inside
        return inside

    def read(self, path: str | Path) -> Document:
        """The recording at ``path``; ``FileNotFoundError`` if absent, :class:`RecordingFileError`
        if it is unusable or reached through a link leaving the tree."""
        if not self.contains(os.path.dirname(path)):
            raise RecordingFileError(path, OUTSIDE)
        return read_document(path)

    def kinds(self) -> list[str]:
        """The kind directories (links skipped), sorted."""
        return [name for name, _ in _directories(self.root)]

    def files(self, kind: str) -> Iterator[Path]:
        """Every recording file of ``kind`` (temp files, strays and links skipped), in a stable order."""
        kind_dir = self.root / kind
        if not self.contains(kind_dir) or _is_link(kind_dir):
            return
        for _, shard in _directories(kind_dir):
            try:
                names = sorted(os.listdir(shard))
            except OSError:
                continue
            for name in names:
                if name_hash(name) is not None and not _is_link(shard / name):
                    yield shard / name

    def write(self, path: Path, content: bytes) -> None:
        """Write ``content`` to ``path`` atomically; :class:`RecordingFileError` when its directory
        leads outside the tree or it is larger than a recording may be (nothing is written),
        ``OSError`` when writing fails."""
        if len(content) > MAX_FILE_BYTES:  # it could never be read back
            raise RecordingFileError(path, f"would be larger than {MAX_FILE_BYTES} bytes")
        # Checked before the directory is made: a link on the way must not get one made elsewhere.
        if not self.contains(path.parent):
            raise RecordingFileError(path, OUTSIDE)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, content)

    def sweep(self, directory: Path, *, now: float | None = None) -> int:
        """Delete temp files of killed writers in ``directory`` (regular files only; nothing outside
        the tree); fresh ones may belong to a live writer. Returns how many were deleted."""
        if not self.contains(directory):
            return 0
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
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
        return removed

    def remove(self, path: Path) -> bool:
        """Delete the recording ``path`` (a link is removed, never what it points to); ``False`` when
        it lies outside the tree or is already gone."""
        if not self.contains(path.parent):
            return False
        try:
            path.unlink()
        except OSError:
            return False
        return True


def _is_link(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def _directories(parent: Path) -> list[tuple[str, Path]]:
    """The sub-directories of ``parent`` that are real directories (not links), sorted by name."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return []
    return sorted((e.name, Path(e.path)) for e in entries if e.is_dir(follow_symlinks=False))


def write_atomic(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` so that readers see the old file or the new one, never a part.

    The temp file lives in the same directory (``os.replace`` is atomic only within one file
    system) and is fsynced first, so a crash after the rename cannot leave an empty file behind.
    Concurrent writers of the same key each rename their own temp file; the last one wins whole.
    """
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
