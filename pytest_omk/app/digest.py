"""What an app *is*, for recording its whole answers: a digest of what the user declares.

Whole-answer recording of an app (``--omk-app-record answers``) is an opt-in for slow apps. Its
key holds a digest of the app, so that a change to the app's code is a replay miss, never a stale
pass. The app is declared with ``--omk-app-digest`` / ``omk_app_digest``: paths or glob patterns
relative to the rootdir (a directory stands for every file under it) and ``version:TEXT`` lines;
with no declaration, the source file of the callable's module. No pytest here.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_omk.errors import ConfigError

_SKIPPED_PARTS = frozenset(
    {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
)
_DIGEST_HEX = 16
"""Hex digits kept: a miss message quotes the digest whole, and 64 bits tell two versions apart."""


@dataclass(frozen=True)
class AppDigest:
    """The digest of an app and what it was computed from."""

    sha256: str
    of: tuple[str, ...]
    """The declarations (or the module file) it covers, as written."""

    def identity(self) -> dict[str, Any]:
        """The ``app`` part of a whole-answer recording's key."""
        return {"sha256": self.sha256, "of": list(self.of)}


def app_digest(
    declared: Sequence[str], *, rootdir: Path, app: Any = None, option: str = "omk_app_digest"
) -> AppDigest:
    """Digest the declared paths and versions; with none declared, the module file of ``app``."""
    lines = [line.strip() for line in declared if line.strip()]
    if not lines:
        module_file = _module_file(app)
        if module_file is None:
            raise ConfigError(
                f"{option} is needed for whole-answer recording of this app: list its source paths or a "
                "version:TEXT line (its module's source file could not be found)"
            )
        lines = [_shown(module_file, rootdir)]
    hasher = hashlib.sha256()
    for line in lines:
        if line.startswith("version:"):
            hasher.update(b"version\0" + line.removeprefix("version:").strip().encode() + b"\0")
            continue
        files = _files(line, rootdir)
        if not files:
            raise ConfigError(
                f"{option}: {line!r} matches no file under {rootdir} (paths, globs or version:TEXT)"
            )
        for file in files:
            hasher.update(b"file\0" + _shown(file, rootdir).encode() + b"\0")
            hasher.update(hashlib.sha256(file.read_bytes()).digest())
    return AppDigest(hasher.hexdigest()[:_DIGEST_HEX], tuple(lines))


def code_digest(
    declared: Sequence[str], *, rootdir: Path, app: Any = None, files: Sequence[Path] = ()
) -> AppDigest | None:
    """The app's code as ``--omk-changed`` sees it: what is declared, else the source file of the
    module of ``app``, else ``files`` (the file that defines the ``omk_app`` fixture); ``None``
    when nothing of the app can be read (a command with nothing declared)."""
    if any(line.strip() for line in declared):
        return app_digest(declared, rootdir=rootdir, option="--omk-app-digest")
    module_file = _module_file(app)
    found = [module_file] if module_file is not None else [file for file in files if file.is_file()]
    if not found:
        return None
    return app_digest([_shown(file, rootdir) for file in found], rootdir=rootdir)


def _files(line: str, rootdir: Path) -> list[Path]:
    path = Path(line)
    base = path if path.is_absolute() else rootdir / path
    if base.is_file():
        return [base]
    if base.is_dir():
        return sorted(_walk(base.rglob("*")))
    if path.is_absolute():
        return []
    return sorted(
        _walk(p for match in rootdir.glob(line) for p in ([match] if match.is_file() else match.rglob("*")))
    )


def _walk(paths: Iterable[Path]) -> Iterable[Path]:
    return (
        p for p in paths if p.is_file() and not _SKIPPED_PARTS.intersection(p.parts) and p.suffix != ".pyc"
    )


def _module_file(app: Any) -> Path | None:
    if app is None:
        return None
    target = inspect.unwrap(app) if callable(app) else app
    for candidate in (target, type(target)):
        try:
            found = inspect.getsourcefile(candidate)
        except TypeError:
            continue
        if found:
            return Path(found).resolve()
    return None


def _shown(path: Path, rootdir: Path) -> str:
    resolved = path.resolve()
    return (
        resolved.relative_to(rootdir.resolve()).as_posix()
        if resolved.is_relative_to(rootdir.resolve())
        else str(resolved)
    )
