"""The recordings store: every model call is replayed from, or recorded to, one JSON file.

The record modes (``--omk-record-mode``) are described in :mod:`pytest_omk.recordings.modes`.

The generic layer (:meth:`RecordingStore.get` / :meth:`RecordingStore.put`) stores any JSON payload
under a ``kind`` (``execute``, ``judge``, ``fetch`` ...) and an identity; :meth:`RecordingStore.call`
applies the modes to executor calls. The file format lives in :mod:`.files`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
import warnings
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_omk.errors import ReplayMissError
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.diff import describe_miss
from pytest_omk.recordings.endpoints import call_identity
from pytest_omk.recordings.files import (
    Document,
    RecordingFileError,
    build_document,
    canonical_json,
    check_identity,
    check_kind,
    recording_key,
    render,
)
from pytest_omk.recordings.index import RecordingIndex
from pytest_omk.recordings.modes import RECORD_MODES, RecordMode, relative_source, replay_only, touch
from pytest_omk.recordings.modes import records as _records_in
from pytest_omk.recordings.modes import replays as _replays_in
from pytest_omk.recordings.naming import RecordingPaths
from pytest_omk.recordings.reader import Check, DocumentReader, Wanted
from pytest_omk.recordings.repeats import TAKE, recorded_or_last
from pytest_omk.recordings.scrub import environment_snapshot, secrets_from_env
from pytest_omk.recordings.tree import RecordingTree


class RecordingStore:
    """Replays and records model calls under ``directory`` according to ``mode``.

    ``directory=None`` or ``mode="off"`` disables the store: every call is live and nothing is
    read or written. ``secrets`` are scrubbed from every file (as are credential-like environment
    variables, read once when the store is made); ``warn`` receives the store's warnings (default:
    :func:`warnings.warn`). Safe to share between threads and, through the file system, between
    xdist workers.
    """

    def __init__(
        self,
        directory: Path | None,
        mode: RecordMode,
        *,
        secrets: Iterable[str] = (),
        warn: Callable[[str], None] | None = None,
        started_ns: int | None = None,
    ) -> None:
        if mode not in RECORD_MODES:
            raise ValueError(f"record mode {mode!r} is not one of {', '.join(RECORD_MODES)}")
        self.mode: RecordMode = mode
        self.directory: Path | None = None if mode == "off" or directory is None else Path(directory)
        # The environment's secrets are read once, here: pytest's main thread sets and deletes
        # PYTEST_CURRENT_TEST while calls are recorded on the loop's thread (iterating: KeyError).
        self.environment = environment_snapshot()
        """The environment as it was when the store was made (the session's scrubber reuses it)."""
        self._paths = RecordingPaths(
            self.directory or Path(), (*secrets, *secrets_from_env(self.environment))
        )
        self.masked: Callable[[str], str] = lambda text: self._paths.redactor().masked(text)
        """Masks every known secret in a text: a judge's prompt must carry no provider's credentials."""
        self._warn_callback = warn
        self._tree = RecordingTree(self.directory or Path())
        self._index = RecordingIndex(self._tree) if self.directory is not None else None
        self._reader = DocumentReader(mode, self._warn, self._tree)
        self.checks: dict[str, Check] = {}  # per kind: why a found result is unusable (as a corrupt file)
        # ``once``: recordings made before the run started (under xdist: the controller's start).
        self.started_ns = time.time_ns() if started_ns is None else started_ns

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Scrub these values too (e.g. MCP server tokens known only once their config is read)."""
        self._paths.add_secrets(secrets)

    # -- mode predicates ----------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        """Whether the store reads or writes anything at all."""
        return self.directory is not None

    @property
    def replays(self) -> bool:
        """Whether recorded calls are replayed (``none``, ``once``, ``new_episodes``)."""
        return self.enabled and _replays_in(self.mode)

    @property
    def records(self) -> bool:
        """Whether live calls are written (``once``, ``new_episodes``, ``all``, ``rewrite``)."""
        return self.enabled and _records_in(self.mode)

    @property
    def replay_only(self) -> bool:
        """Whether a miss is an error (``none``)."""
        return replay_only(self.mode, self.directory)

    # -- generic layer ------------------------------------------------------------------------

    def get(self, kind: str, identity: Mapping[str, Any], *, label: str = "") -> dict[str, Any] | None:
        """The recorded payload for ``identity``, or ``None`` (a miss, or a mode that never replays).

        ``label`` (the sample id) only names the file. A corrupt recording is a miss with a warning,
        except in ``none`` mode, where it raises :class:`ReplayMissError` naming the file.
        """
        document = self._lookup(kind, identity, label)
        return None if document is None else document.result

    def put(
        self,
        kind: str,
        identity: Mapping[str, Any],
        payload: Mapping[str, Any],
        *,
        label: str = "",
        source: Path | None = None,
    ) -> dict[str, Any] | None:
        """Record ``payload`` for ``identity`` when the mode records; a write failure only warns.

        Returns the payload a different recording held before this one replaced it (record modes
        ``all`` and ``rewrite``), else ``None``.
        """
        if not self.records:
            return None
        assert self.directory is not None
        check_kind(kind)
        check_identity(identity)
        # The key hashes the unscrubbed identity so that replay lookups (which see the real prompt)
        # find the file. Consequence: the key still depends on a prompt that contained a secret, so
        # rotating that secret turns the call into a miss. Only the hash reaches disk, not the secret.
        key = recording_key(kind, identity)
        redactor = self._paths.redactor()
        path = self._paths.path(kind, key, label)
        file = relative_source(source, self.directory)
        document = build_document(
            kind, key, redactor.text(label), self._paths.stored(identity), self._paths.stored(payload), file
        )
        content = render(document)
        rewriting = self.mode in ("all", "rewrite")
        unchanged, previous = self._reader.replacing(path, content) if rewriting else (False, None)
        if unchanged:
            # Same answer again: keep the file and its date, so git shows no churn (``rewrite``
            # marks it used by its modification time, see pytest_omk.recordings.modes).
            if self.mode == "rewrite":
                touch(path)
            return None
        try:
            self._tree.write(path, content)
        except (RecordingFileError, OSError) as exc:
            why = f"it {exc.reason}" if isinstance(exc, RecordingFileError) else f"({exc})"
            self._warn(f"pytest-omk could not write recording {path}: {why}; the call was not recorded.")
            return None
        self._after_write(kind, key, path)
        return previous

    async def call_raw(
        self,
        kind: str,
        identity: Mapping[str, Any],
        live: Callable[[], Awaitable[Mapping[str, Any]]],
        *,
        label: str = "",
        source: Path | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """Apply the record mode to any JSON call (URL fetches, an app's model calls ...):
        ``(payload, replayed)``. ``source``: the sample file the call is made for, if known."""
        if self.replays:
            document = self._lookup(kind, identity, label)
            if document is not None:
                return document.result, True
            if self.replay_only or self._once_and_recorded(source):
                raise ReplayMissError(self.explain_miss(kind, identity, label=label))
        payload = dict(await live())
        if self.records:
            # Writing fsyncs: done on a worker thread so other calls in flight are not held up.
            await asyncio.to_thread(self.put, kind, identity, payload, label=label, source=source)
        return payload, False

    # -- typed layer --------------------------------------------------------------------------

    async def call(
        self,
        executor_id: str,
        request: ExecutionRequest,
        live: Callable[[], Awaitable[ExecutionResult]],
        *,
        endpoint: str | None = None,
        looked_up: bool = False,
        app: Mapping[str, Any] | None = None,
    ) -> ExecutionResult:
        """Answer ``request`` from a recording or through ``live()``, as the mode says.

        A replayed result carries ``replayed=True`` and its recorded telemetry and trace unchanged.
        A live call that raises is never recorded. ``looked_up``: :meth:`recorded` found nothing.
        ``app``: the digest of an app whose whole answers are recorded (part of the key).
        """
        if not (self.replays or self.records):
            return await live()  # nothing to look up or write: no key, no dump, no thread hop
        replayed = None if looked_up else self.recorded(executor_id, request, endpoint=endpoint, app=app)
        if replayed is not None:
            return replayed
        kind, label = request.purpose, request.sample_id
        identity = call_identity(executor_id, request, endpoint, app)
        if self.replays and (self.replay_only or self._once_and_recorded(request.source)):
            raise ReplayMissError(self.explain_miss(kind, identity, label=label))
        result = await live()
        if self.records:
            # Only a recording needs the dump, and the thread hop that keeps its fsync off the loop.
            payload = result.model_dump(mode="json", exclude={"replayed", "previousOutput", "appCalls"})
            previous = await asyncio.to_thread(
                self.put, kind, identity, payload, label=label, source=request.source
            )
            if previous is not None and previous.get("output") != result.output:
                # A re-recording changed the answer: the review shows old -> new.
                result = result.model_copy(update={"previousOutput": str(previous.get("output", ""))})
        return result

    def recorded(
        self, executor_id: str, request: ExecutionRequest, *, endpoint: str | None = None, app: Any = None
    ) -> ExecutionResult | None:
        """What :meth:`call` would replay for ``request`` (:mod:`.repeats` for a rerun), read now."""
        if not self.replays:
            return None
        identity = call_identity(executor_id, request, endpoint, app)
        lookup = functools.partial(self._lookup, request.purpose, label=request.sample_id)
        document = recorded_or_last(lookup, identity, TAKE, earlier=self.replay_only)
        return None if document is None else self._reader.result(document)

    def recorded_for(self, kind: str, label: str, source: Path | None) -> bool:
        """Whether any recording of ``kind`` was made for sample ``label`` of the file ``source``."""
        index, file = self._index, relative_source(source, self.directory) if self.directory else None
        documents = index.documents_of(kind, self._paths.redactor().text(label)) if index else []
        return any(doc.file == file for doc in documents)

    def explain_miss(self, kind: str, identity: Mapping[str, Any], *, label: str = "") -> str:
        """Why nothing replays: the nearest recording for the same executor and what differs."""
        if self.directory is None:
            return f"pytest-omk recordings are off, so sample {label!r} has nothing to replay."
        redactor, directory, index = self._paths.redactor(), self.directory, self._index
        expected = self._paths.path(kind, recording_key(kind, identity), label).relative_to(directory)
        lines = describe_miss(
            mode=self.mode,
            kind=kind,
            label=label,
            directory=directory,
            expected=expected,
            identity=redactor.data(dict(identity)),
            documents=index.documents(kind) if index is not None else [],
            same_sample=index.documents_of(kind, redactor.text(label)) if index is not None else [],
        )
        return redactor.text("\n".join(lines))

    def _once_and_recorded(self, source: Path | None) -> bool:
        """``once``: whether the sample file had recordings before this run (then a miss is an error)."""
        if self.mode != "once" or source is None or self._index is None:
            return False
        assert self.directory is not None
        return relative_source(source, self.directory) in self._index.sample_files_before(self.started_ns)

    def _lookup(self, kind: str, identity: Mapping[str, Any], label: str) -> Document | None:
        if not self.replays:
            return None
        check_kind(kind)
        check_identity(identity)
        key = recording_key(kind, identity)
        stored = functools.cache(lambda: json.loads(canonical_json(self._paths.stored(identity))))
        wanted = Wanted(kind, key, identity, stored)
        where = self._paths.path_name(kind, key, label)
        found = self._reader.find(where, wanted, lambda: self._listing(kind).get(key[:16], ()))
        return self._reader.checked(found, self.checks.get(kind))

    def _after_write(self, kind: str, key: str, path: Path) -> None:
        if self._index is not None and self._index.added(kind, key, path):
            self._tree.sweep(path.parent)

    def _listing(self, kind: str) -> dict[str, list[Path]]:
        assert self._index is not None
        return self._index.listing(kind)

    def _warn(self, message: str) -> None:
        message = self._paths.redactor().text(message)
        if self._warn_callback is not None:
            self._warn_callback(message)
        else:
            warnings.warn(message, UserWarning, stacklevel=3)
