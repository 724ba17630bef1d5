"""Reading recording files for a store: what counts as usable, and what an unusable file costs.

A file that cannot be used (corrupt JSON, a key that does not match its name, a result that is no
longer valid) is a replay-only run's error, since ``none`` cannot re-record it; in every other mode
it is a miss with one warning per file, and the call runs live and is recorded again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from pytest_omk.errors import ReplayMissError
from pytest_omk.models.results import ExecutionResult
from pytest_omk.recordings.files import Document, RecordingFileError, name_hash, parse_document, read_document
from pytest_omk.recordings.modes import RecordMode


class DocumentReader:
    """Reads the documents of one store in ``mode``; warnings go to ``warn`` (once per file)."""

    def __init__(self, mode: RecordMode, warn: Callable[[str], None]) -> None:
        self.mode = mode
        self._warn = warn
        self._lock = threading.Lock()
        self._warned: set[Path] = set()

    def usable(self, path: str | Path) -> Document | None:
        """The document at ``path``; ``None`` when there is none or it is unusable (reported)."""
        try:
            return read_document(path)
        except FileNotFoundError:
            return None
        except RecordingFileError as exc:
            self._unusable(exc)
            return None

    def matching(self, path: str | Path, key: str) -> Document | None:
        """The document at ``path`` when it records ``key``."""
        document = self.usable(path)
        if document is None:
            return None
        if document.key == key:
            return document
        if name_hash(os.path.basename(path)) != document.key[:16]:
            self._unusable(RecordingFileError(path, "has a key that does not match its file name"))
        return None  # otherwise a 64-bit prefix collision: simply not this call's recording

    def result(self, document: Document) -> ExecutionResult | None:
        """The executor result a document records, marked replayed; ``None`` when it no longer validates."""
        try:
            return ExecutionResult.model_validate({**document.result, "replayed": True})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            self._unusable(
                RecordingFileError(document.path, f"has an invalid result ({where}: {first['msg']})")
            )
            return None

    def unchanged(self, path: Path, content: bytes) -> bool:
        """Whether ``path`` already records what ``content`` would (same key, label, identity, result)."""
        old = self.usable(path)
        if old is None:
            return False
        new = parse_document(path, content)
        return (old.key, old.label, old.identity, old.result) == (
            new.key,
            new.label,
            new.identity,
            new.result,
        )

    def _unusable(self, exc: RecordingFileError) -> None:
        if self.mode == "none":
            raise ReplayMissError(
                f"recording {exc.path} is unusable: it {exc.reason}. Replay-only mode "
                "(--omk-record-mode=none) cannot re-record it: fix or delete the file, then record "
                "with --omk-record-mode=new_episodes."
            ) from exc
        with self._lock:
            if exc.path in self._warned:
                return
            self._warned.add(exc.path)
        self._warn(
            f"pytest-omk ignores recording {exc.path}: it {exc.reason}. The call runs live and is recorded again."
        )
