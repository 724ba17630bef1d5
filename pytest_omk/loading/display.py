"""How a sample file's path is shown to users (node ids, records, messages)."""

from __future__ import annotations

from pathlib import Path


def display_path(path: Path, rootpath: Path) -> str:
    """``path`` as shown to users: relative to the rootdir (POSIX) when inside it, else as is."""
    return path.relative_to(rootpath).as_posix() if path.is_relative_to(rootpath) else str(path)
