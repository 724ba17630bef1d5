"""Reading recording files for a store: what counts as usable, and what an unusable file costs.

A file that cannot be used (corrupt JSON, not a regular file, a link leaving the tree, too large or
too deep, a number out of range, a key that does not match its name, a readable request that does
not match its key, a result that is no longer valid) is a replay-only run's error, since ``none``
cannot re-record it; in every other mode it is a miss with one warning per file, and the call runs
live and is recorded again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_omk.errors import ReplayMissError
from pytest_omk.models.results import MAX_NUMBER, ExecutionResult, shown_number
from pytest_omk.recordings.agreement import request_difference
from pytest_omk.recordings.files import Document, RecordingFileError, name_hash, parse_document, recording_key
from pytest_omk.recordings.modes import RecordMode
from pytest_omk.recordings.tree import RecordingTree

Check = Callable[[Mapping[str, Any]], str | None]
"""Why a recorded result is unusable (it "has ..."), or ``None``."""


@dataclass(frozen=True)
class Wanted:
    """The call a lookup is for: its kind, key and identity, and that identity as a recording stores
    it (``stored()``: scrubbed and capped, made only when a file's request needs comparing)."""

    kind: str
    key: str
    identity: Mapping[str, Any]
    stored: Callable[[], dict[str, Any]]


class DocumentReader:
    """Reads the documents of one store in ``mode``; warnings go to ``warn`` (once per file)."""

    def __init__(self, mode: RecordMode, warn: Callable[[str], None], tree: RecordingTree) -> None:
        self.mode = mode
        self._warn = warn
        self._tree = tree
        self._lock = threading.Lock()
        self._warned: set[Path] = set()

    def usable(self, path: str | Path) -> Document | None:
        """The document at ``path``; ``None`` when there is none or it is unusable (reported)."""
        try:
            return self._tree.read(path)
        except FileNotFoundError:
            return None
        except RecordingFileError as exc:
            self._unusable(exc)
            return None

    def find(self, path: str, wanted: Wanted, candidates: Callable[[], Iterable[Path]]) -> Document | None:
        """The recording of ``wanted`` at ``path``, else among ``candidates()`` (the files whose name
        ends with the key's prefix: the label only names the file, so a renamed sample, or another
        sample that sent the very same request, still replays by key)."""
        document = self.matching(path, wanted)
        if document is not None:
            return document
        for candidate in candidates():
            if str(candidate) != path and (document := self.matching(candidate, wanted)) is not None:
                return document
        return None

    def matching(self, path: str | Path, wanted: Wanted) -> Document | None:
        """The document at ``path`` when it records ``wanted``'s key and its readable request is the
        one the key hashes."""
        document = self.usable(path)
        if document is None:
            return None
        if document.key == wanted.key:
            return document if self._agrees(document, wanted) else None
        if name_hash(os.path.basename(path)) != document.key[:16]:
            self._unusable(RecordingFileError(path, "has a key that does not match its file name"))
        return None  # otherwise a 64-bit prefix collision: simply not this call's recording

    def _agrees(self, document: Document, wanted: Wanted) -> bool:
        # Most files hold the call's request as it is (or hash to the key as they are); only scrubbed
        # or cut requests need comparing with what the store would write.
        if (
            document.identity == wanted.identity
            or recording_key(wanted.kind, document.identity) == wanted.key
        ):
            return True
        difference = request_difference(document.identity, wanted.stored())
        if difference is None:
            return True
        self._unusable(
            RecordingFileError(
                document.path,
                f"shows a request that does not match its key (at {difference}): it would answer "
                "another call than the one it shows",
            )
        )
        return False

    def checked(self, document: Document | None, check: Check | None) -> Document | None:
        """``document`` unless ``check`` finds its result unusable (reported as a corrupt file is)."""
        reason = None if document is None or check is None else check(document.result)
        if document is None or reason is None:
            return document
        self._unusable(RecordingFileError(document.path, reason))
        return None

    def result(self, document: Document) -> ExecutionResult | None:
        """The executor result a document records, marked replayed; ``None`` when it no longer
        validates or holds a count, cost or time out of range."""
        try:
            result = ExecutionResult.model_validate({**document.result, "replayed": True})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            self._unusable(
                RecordingFileError(document.path, f"has an invalid result ({where}: {first['msg']})")
            )
            return None
        invalid = result.invalid_number()
        if invalid is not None:
            name, value = invalid
            reason = f"has an invalid result.{name}: {shown_number(value)} (allowed: 0 to {MAX_NUMBER})"
            self._unusable(RecordingFileError(document.path, reason))
            return None
        return result

    def replacing(self, path: Path, content: bytes) -> tuple[bool, dict[str, Any] | None]:
        """What writing ``content`` to ``path`` would replace: whether the file already records the
        same (key, label, identity, result), and else the result it held for the same key."""
        old = self.usable(path)
        if old is None:
            return False, None
        new = parse_document(path, content)
        if (old.key, old.label, old.identity, old.result) == (new.key, new.label, new.identity, new.result):
            return True, None
        return False, old.result if old.key == new.key else None

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
