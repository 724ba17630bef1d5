"""Each installed distribution's metadata, file list and entry points parsed once per test process.

Every pytest run in process (pytester's, hundreds in this suite) asks ``importlib.metadata`` about
the installed distributions again: pytest reads every one's entry points to find plugins, marks
each plugin's files for assertion rewriting (the ``RECORD`` file, one path object per line), its
report header and pytest-metadata name each plugin's version, and the plugin's run environment
reads versions; each question parses the distribution's ``METADATA`` with the email parser afresh. That was about a fifth of a small
in-process run's CPU. The answers cannot change while the suite runs (it installs nothing), so
the parsed results are kept per distribution directory; a distribution at any other path (one a
test writes) is parsed, and then kept, on its own.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

_MISSING = object()


def _path_of(dist: importlib.metadata.Distribution) -> str | None:
    path = getattr(dist, "_path", None)
    return None if path is None else f"{type(path).__name__}:{path}"


def _cached(name: str, original: property) -> property:
    """``original`` (a property of ``Distribution``) computed once per distribution path."""
    kept: dict[str, Any] = {}

    def get(dist: importlib.metadata.Distribution) -> Any:
        key = _path_of(dist)
        if key is None:
            return original.fget(dist) if original.fget else None
        value = kept.get(key, _MISSING)
        if value is _MISSING:
            value = kept[key] = original.fget(dist) if original.fget else None
        return value

    get.__name__ = name
    get.__doc__ = original.__doc__
    return property(get)


def keep_distribution_metadata() -> None:
    """Parse each distribution's ``METADATA``, ``RECORD`` and entry points once (idempotent)."""
    cls = importlib.metadata.Distribution
    if getattr(cls, "_omk_tests_cached", False):
        return
    for name in ("metadata", "files", "entry_points"):
        setattr(cls, name, _cached(name, cls.__dict__[name]))
    cls._omk_tests_cached = True  # type: ignore[attr-defined]
