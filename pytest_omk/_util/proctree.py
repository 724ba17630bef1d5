"""Finding and killing every process a command started, including those that left its group.

A command or an agent's ``Bash`` runs in a session of its own, and its process group is killed
when it ends. A child that called ``setsid`` (``setsid sleep 60 &``) is in neither, yet it may
hold the output open or outlive the run. Every such process is therefore started with a random
marker in its environment (:func:`tagged_environment`), which its descendants inherit; a scan of
``/proc`` (:func:`kill_tagged`) finds and kills them all. Where there is no ``/proc`` only the
process group is killed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from collections.abc import Iterable, Mapping
from pathlib import Path

MARKER_VARIABLE = "PYTEST_OMK_PROCESS_TAG"
"""The environment variable carrying the marker (its value is random per command)."""


def tagged_environment(env: Mapping[str, str]) -> tuple[dict[str, str], str]:
    """``env`` with a fresh marker added, and the marker's ``NAME=value`` bytes text."""
    token = secrets.token_hex(12)
    return {**env, MARKER_VARIABLE: token}, f"{MARKER_VARIABLE}={token}"


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def tagged_pids(tag: str | Iterable[str], proc: Path = Path("/proc")) -> list[int]:
    """Live processes whose environment holds ``tag`` (``NAME=value``), or any of several tags."""
    needles = {tag.encode()} if isinstance(tag, str) else {t.encode() for t in tag}
    found: list[int] = []
    try:
        entries = list(os.scandir(proc))
    except OSError:
        return found
    own = os.getpid()
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == own:
            continue
        try:
            environ = (proc / entry.name / "environ").read_bytes()
        except OSError:
            continue
        if needles.intersection(environ.split(b"\0")):
            found.append(int(entry.name))
    return found


def kill_tagged(tag: str | Iterable[str], group: int | None = None) -> int:
    """Kill the process group ``group`` and every process carrying ``tag`` (or any of several
    tags); how many were found.

    Repeated until none is left, since a process may fork while the previous round kills.
    """
    if group is not None:
        kill_group(group)
    total = 0
    for _ in range(10):
        pids = tagged_pids(tag)
        if not pids:
            break
        total += len(pids)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    return total
