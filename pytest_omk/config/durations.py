"""pytest-split's ``.test_durations`` file: a JSON object of node id → seconds, read and written.

``--omk-store-durations`` writes one from a run's recorded call latencies; ``--omk-durations``
reads one to weigh the samples for ``--omk-shard-by durations``. The file read is hostile input (a
committed file, or one a CI cache handed over): a regular file only, never through a link, at most
:data:`MAX_DURATIONS_BYTES`, every key a string and every value a finite number of seconds that is
not negative; anything else is one :class:`ConfigError` naming the file and what is wrong.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path

from pytest_omk._util.regular_files import RefusedFile, read_regular
from pytest_omk.errors import ConfigError

MAX_DURATIONS_BYTES = 32 * 1024 * 1024
"""Largest durations file read: ~200,000 node ids of 150 characters each."""
MAX_SECONDS = 7 * 24 * 3600.0
"""A week: no one sample's calls take longer (a larger value is a mistake or an attack on the split)."""


def read_durations(path: Path) -> dict[str, float] | None:
    """The seconds by node id in ``path``; ``None`` when there is no such file."""
    try:
        data = read_regular(path, MAX_DURATIONS_BYTES)
    except FileNotFoundError:
        return None
    except RefusedFile as exc:
        raise ConfigError(f"--omk-durations {path}: the file {exc.reason}") from None
    except OSError as exc:
        raise ConfigError(f"--omk-durations {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        document = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ConfigError(f"--omk-durations {path}: not JSON ({str(exc)[:80]})") from None
    if not isinstance(document, dict):
        raise ConfigError(
            f"--omk-durations {path}: must be a JSON object of node id to seconds (pytest-split's "
            f".test_durations), not {type(document).__name__}"
        )
    durations: dict[str, float] = {}
    for key, value in document.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_SECONDS:
            raise ConfigError(
                f"--omk-durations {path}: {key[:80]!r} must be seconds (a number from 0 to "
                f"{MAX_SECONDS:g}), not {str(value)[:40]!r}"
            )
        durations[key] = float(value)
    return durations


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def write_durations(path: Path, durations: Mapping[str, float]) -> None:
    """Write ``durations`` to ``path`` as pytest-split does: sorted by node id, indented, atomically."""
    clean = {
        nodeid: round(seconds, 6) for nodeid, seconds in sorted(durations.items()) if math.isfinite(seconds)
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(clean, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def weights_for(nodeids: list[str], durations: Mapping[str, float]) -> tuple[list[float], int]:
    """Each node id's seconds, the mean of the known ones for the others; and how many were known."""
    known = [durations[nodeid] for nodeid in nodeids if nodeid in durations]
    mean = sum(known) / len(known) if known else 1.0
    return [durations.get(nodeid, mean) for nodeid in nodeids], len(known)
