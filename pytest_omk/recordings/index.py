"""What a recordings directory holds, per kind: built lazily on the first miss, kept while writing.

The store looks a key up by its file-name hash (a renamed sample still replays) and explains a miss
from the parsed documents; both come from here. Safe to share between threads.
"""

from __future__ import annotations

import threading
from pathlib import Path

from pytest_omk.recordings.files import Document, RecordingFileError
from pytest_omk.recordings.tree import RecordingTree


class RecordingIndex:
    """The files under ``directory`` by kind and key prefix, and their parsed documents."""

    def __init__(self, tree: RecordingTree) -> None:
        self.tree = tree
        self._lock = threading.Lock()
        self._listings: dict[str, dict[str, list[Path]]] = {}
        self._documents: dict[str, list[Document]] = {}
        self._by_label: dict[str, dict[str, list[Document]]] = {}
        self._swept: set[Path] = set()
        self._files_before: set[str] | None = None

    def listing(self, kind: str) -> dict[str, list[Path]]:
        """Key prefix (16 hex) -> the files of ``kind`` whose name ends with it."""
        with self._lock:
            listing = self._listings.get(kind)
            if listing is None:
                listing = {}
                for path in self.tree.files(kind):
                    listing.setdefault(path.name.removesuffix(".json")[-16:], []).append(path)
                self._listings[kind] = listing
            return listing

    def documents(self, kind: str) -> list[Document]:
        """Every readable document of ``kind`` (for miss diagnostics; broken files are left out)."""
        with self._lock:
            cached = self._documents.get(kind)
        if cached is not None:
            return cached
        documents = []
        for path in self.tree.files(kind):
            try:
                documents.append(self.tree.read(path))
            except (OSError, RecordingFileError):
                continue  # diagnostics only: a broken neighbour must not hide the real miss
        with self._lock:
            self._documents[kind] = documents
        return documents

    def documents_of(self, kind: str, label: str) -> list[Document]:
        """The readable documents of ``kind`` recorded for sample ``label`` (grouped once per kind)."""
        documents = self.documents(kind)
        with self._lock:
            groups = self._by_label.get(kind)
            if groups is None or self._documents.get(kind) is not documents:
                groups = {}
                for document in documents:
                    groups.setdefault(document.label, []).append(document)
                self._by_label[kind] = groups
        return groups.get(label, [])

    def added(self, kind: str, key: str, path: Path) -> bool:
        """Note a written file; ``True`` the first time its directory is written to (sweep it)."""
        with self._lock:
            listing = self._listings.get(kind)
            if listing is not None and path not in listing.setdefault(key[:16], []):
                listing[key[:16]].append(path)
            self._documents.pop(kind, None)
            self._by_label.pop(kind, None)
            first_write_here = path.parent not in self._swept
            self._swept.add(path.parent)
        return first_write_here

    def sample_files_before(self, started_ns: int) -> set[str]:
        """The sample files (as recordings name them) with a recording older than ``started_ns``.

        What ``once`` asks: read once per run, so that what this run records does not count.
        """
        with self._lock:
            if self._files_before is not None:
                return self._files_before
        found = {
            document.file
            for kind in self.tree.kinds()
            for document in self.documents(kind)
            if document.file is not None and _modified_before(document.path, started_ns)
        }
        with self._lock:
            self._files_before = found
        return found


def _modified_before(path: Path, started_ns: int) -> bool:
    try:
        return path.stat().st_mtime_ns < started_ns
    except OSError:
        return False
