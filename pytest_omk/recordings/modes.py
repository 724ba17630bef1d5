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
                                                                     that ran, not used by this
                                                                     run, are deleted
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


def default_mode(given: str | None, environ: Mapping[str, str]) -> RecordMode:
    """The mode given, else ``none`` in CI (a CI run never pays for a call by accident), else ``new_episodes``."""
    if given:
        if given not in RECORD_MODES:
            raise ValueError(f"record mode {given!r} is not one of {', '.join(RECORD_MODES)}")
        return given
    return CI_MODE if running_in_ci(environ) else DEFAULT_MODE


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
