"""Record modes in vcrpy's vocabulary, the CI default, and the bookkeeping ``once`` and ``rewrite`` need.

=============  ======================  ============================  ===========================
mode           recorded call           unrecorded call               afterwards
=============  ======================  ============================  ===========================
``none``       replayed                error (no transport exists)   nothing written
``once``       replayed                live + recorded, unless the   nothing removed
                                       sample file has recordings
                                       already (then an error)
``new_episodes`` replayed              live + recorded               nothing removed
``all``        live, overwritten       live + recorded               nothing removed
``rewrite``    live, overwritten       live + recorded               recordings of the samples
                                                                     that ran, by the executor,
                                                                     endpoint and model that ran,
                                                                     not used by this run, are
                                                                     deleted
``off``        live                    live                          no store at all
=============  ======================  ============================  ===========================

A file's recordings carry the sample file they were made for (``"file"``, relative to the
recordings directory), which is what ``once`` asks about. "Used by this run" is read from the file
system, so it holds across xdist workers: every recording this run wrote or confirmed has a
modification time at or after the run's start (``rewrite`` touches an unchanged file).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

RecordMode = Literal["none", "once", "new_episodes", "all", "rewrite", "off"]
RECORD_MODES: tuple[RecordMode, ...] = ("none", "once", "new_episodes", "all", "rewrite", "off")
DEFAULT_MODE: RecordMode = "new_episodes"
CI_MODE: RecordMode = "none"
_FALSE_WORDS = ("", "0", "false", "no", "off")


def running_in_ci(environ: Mapping[str, str]) -> bool:
    """Whether ``CI`` is set to anything but an empty or false-like word (as most CI services set it)."""
    return environ.get("CI", "").strip().lower() not in _FALSE_WORDS


ENV_MODE = "OMK_RECORD_MODE"
"""The environment variable a CI job sets to record on purpose (``--omk-record-mode`` wins over it)."""


@dataclass(frozen=True)
class ModeChoice:
    """The run's record mode, where it came from, and an ini value set aside in CI."""

    mode: RecordMode
    source: str
    """``--omk-record-mode``, ``OMK_RECORD_MODE``, ``ini key omk_record_mode`` or ``default``."""
    ignored_ini: str | None = None
    """The ini file's mode when ``CI`` set it aside (ini files are for local runs)."""


def choose_mode(cli: str | None, ini: str | None, environ: Mapping[str, str]) -> ModeChoice:
    """The record mode: the command line's, else ``OMK_RECORD_MODE``, else the ini file's, else
    ``new_episodes``. Under ``CI`` the ini value is set aside and the default is ``none``: a CI run
    makes live calls only when its job asks for them (a flag or the variable), never because of a
    value in the project's ini file that was written for local runs. Raises :class:`ValueError`
    naming the source for a mode that is not one of :data:`RECORD_MODES`."""
    ci = running_in_ci(environ)
    env = environ.get(ENV_MODE, "").strip() or None
    for source, given in (("--omk-record-mode", cli), (ENV_MODE, env)):
        if given:
            return ModeChoice(_checked(given, source), source)
    if ini and not ci:
        return ModeChoice(_checked(ini, "ini key omk_record_mode"), "ini key omk_record_mode")
    return ModeChoice(CI_MODE if ci else DEFAULT_MODE, "default", ignored_ini=ini if ci else None)


def _checked(mode: str, source: str) -> RecordMode:
    for known in RECORD_MODES:
        if mode == known:
            return known
    raise ValueError(f"{source} must be one of {', '.join(RECORD_MODES)}, not {mode!r}")


def replays(mode: str) -> bool:
    """Modes that answer a recorded call from its file."""
    return mode in ("none", "once", "new_episodes")


def records(mode: str) -> bool:
    """Modes that write live answers."""
    return mode in ("once", "new_episodes", "all", "rewrite")


def replay_only(mode: str, directory: Path | None) -> bool:
    """Whether every call must come from a recording: ``none`` with a directory to read them from
    (the store's rule, also asked before any store exists: such a run connects nowhere)."""
    return mode == "none" and directory is not None


def relative_source(source: Path | str | None, directory: Path) -> str | None:
    """The sample file as stored in a recording: relative to the recordings directory, POSIX."""
    if not source:
        return None
    return Path(os.path.relpath(Path(source).resolve(), directory.resolve())).as_posix()


def touch(path: Path) -> None:
    """Mark an unchanged recording as used by this run (``rewrite``); best effort."""
    with contextlib.suppress(OSError):
        os.utime(path)


Caller = tuple[str, str | None, str | None, str | None]
"""Who answered a recorded call, as its identity says: ``(kind, executor id, endpoint, model)``."""


def caller_of(kind: str, identity: Mapping[str, object]) -> Caller | None:
    """The :data:`Caller` of a model call's recording; ``None`` for other kinds (URL fetches)."""
    if kind not in ("execute", "judge"):
        return None
    request = identity.get("request")
    model = request.get("model") if isinstance(request, dict) else None
    endpoint, executor = identity.get("endpoint"), identity.get("executor")
    return (
        kind,
        executor if isinstance(executor, str) else None,
        endpoint if isinstance(endpoint, str) else None,
        model if isinstance(model, str) else None,
    )


def stale(
    documents: Iterable[tuple[Path, str | None, str]], ran: set[tuple[str, str]], started_ns: int
) -> list[Path]:
    """Recordings ``(path, file, label)`` of samples that ran (``(file, label)`` in ``ran``) that
    this run did not use (modified before ``started_ns``)."""
    found = []
    for path, file, label in documents:
        if file is None or (file, label) not in ran:
            continue
        with contextlib.suppress(OSError):
            if path.stat().st_mtime_ns < started_ns:
                found.append(path)
    return found
