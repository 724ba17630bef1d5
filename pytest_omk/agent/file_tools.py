"""The synchronous file tools (``Read``, ``Write``, ``Edit``, ``Glob``, ``Grep``) and path confinement.

Each function takes the working copy's real path and the model's arguments, and returns the text
sent back to the model or raises :class:`ToolError` with a message the model can act on.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

READ_DEFAULT_LINES = 2000
READ_MAX_LINE_CHARS = 2000
GLOB_MAX_RESULTS = 1000
GREP_MAX_LINES = 500
GREP_MAX_FILE_BYTES = 5_000_000
READ_MAX_FILE_BYTES = 10 * 1024 * 1024
"""Largest file ``Read`` and ``Edit`` open (a 1 GB sparse file is refused before it is read)."""
WRITE_MAX_BYTES = 5 * 1024 * 1024
"""Largest content ``Write`` and ``Edit`` write in one call."""
_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv"})


class ToolError(Exception):
    """A tool call that cannot be carried out; the message is what the model is told."""


Expired = Callable[[], bool]


def text_arg(arguments: dict[str, Any], name: str, *, required: bool = True) -> str:
    """A string argument (``""`` when optional and absent)."""
    value = arguments.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ToolError(f"the argument {name!r} must be a string")
    return value


def _int_arg(arguments: dict[str, Any], name: str, default: int) -> int:
    value = arguments.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolError(f"the argument {name!r} must be a positive integer")
    return value


def confine(root: Path, raw: str) -> Path:
    """The real path ``raw`` names inside ``root``; :class:`ToolError` when it leads outside.

    ``raw`` is relative to ``root`` or absolute; ``~`` means the home directory (which is outside).
    Symbolic links are resolved first, so a link cannot smuggle a path out.
    """
    if not raw.strip():
        raise ToolError("the path is empty")
    candidate = Path(os.path.expanduser(raw))
    if not candidate.is_absolute():
        candidate = root / candidate
    real = Path(os.path.realpath(candidate))
    if real != root and root not in real.parents:
        raise ToolError(f"{raw!r} is outside the working directory; use a path inside it")
    return real


def _shown(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() or "."


def read_regular(path: Path, limit: int, shown: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them, else :class:`ToolError`.

    A FIFO, socket or device is refused before it is opened (reading one can block forever or
    never end); the file is opened non-blocking and checked again, so a swap after the first
    check cannot make the read hang either.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ToolError(f"{shown} is not a regular file")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ToolError(f"{shown} does not exist") from None
    except OSError as exc:
        raise ToolError(f"cannot read {shown}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{shown} is not a regular file")
        if info.st_size > limit:
            raise ToolError(f"{shown} has {info.st_size} bytes, more than the {limit}-byte limit")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ToolError(f"{shown} is larger than the {limit}-byte limit")
    return data


def read(root: Path, arguments: dict[str, Any]) -> str:
    """Numbered lines of a text file (``cat -n`` style), from ``offset`` for ``limit`` lines."""
    path = confine(root, text_arg(arguments, "file_path"))
    offset = _int_arg(arguments, "offset", 1)
    limit = _int_arg(arguments, "limit", READ_DEFAULT_LINES)
    if path.is_dir():
        raise ToolError(f"{_shown(root, path)} is a directory; use Glob or Bash ls to list it")
    text = read_regular(path, READ_MAX_FILE_BYTES, _shown(root, path)).decode("utf-8", "replace")
    lines = text.splitlines()
    if not lines:
        return "(the file is empty)"
    chosen = lines[offset - 1 : offset - 1 + limit]
    if not chosen:
        raise ToolError(f"the file has {len(lines)} lines; offset {offset} is past its end")
    numbered = [f"{offset + i:>6}\t{line[:READ_MAX_LINE_CHARS]}" for i, line in enumerate(chosen)]
    if offset - 1 + limit < len(lines):
        numbered.append(f"[{len(lines) - (offset - 1 + limit)} more lines; read on with offset]")
    return "\n".join(numbered)


def write(root: Path, arguments: dict[str, Any]) -> str:
    """Create or overwrite a file with ``content``."""
    path = confine(root, text_arg(arguments, "file_path"))
    content = text_arg(arguments, "content")
    if len(content) > WRITE_MAX_BYTES or len(content.encode("utf-8")) > WRITE_MAX_BYTES:
        raise ToolError(f"the content is larger than the {WRITE_MAX_BYTES}-byte limit of one Write")
    if path.is_dir():
        raise ToolError(f"{_shown(root, path)} is a directory")
    if path.exists() and not path.is_file():
        raise ToolError(f"{_shown(root, path)} is not a regular file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    except OSError as exc:
        raise ToolError(f"cannot write {_shown(root, path)}: {exc.strerror}") from None
    return f"Wrote {len(content.encode('utf-8'))} bytes to {_shown(root, path)}"


def edit(root: Path, arguments: dict[str, Any]) -> str:
    """Replace ``old_string`` by ``new_string``: exactly one occurrence unless ``replace_all``."""
    path = confine(root, text_arg(arguments, "file_path"))
    old, new = text_arg(arguments, "old_string"), text_arg(arguments, "new_string")
    replace_all = arguments.get("replace_all", False) is True
    if not old:
        raise ToolError("old_string is empty; use Write to create a file")
    if old == new:
        raise ToolError("old_string and new_string are the same; nothing to change")
    try:
        text = read_regular(path, READ_MAX_FILE_BYTES, _shown(root, path)).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"cannot edit {_shown(root, path)}: {exc}") from None
    count = text.count(old)
    if count == 0:
        raise ToolError(f"old_string was not found in {_shown(root, path)}")
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_string occurs {count} times in {_shown(root, path)}; add context to make it unique "
            "or set replace_all"
        )
    changed = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    if len(changed.encode("utf-8")) > WRITE_MAX_BYTES:
        raise ToolError(f"the edited file would be larger than the {WRITE_MAX_BYTES}-byte limit")
    path.write_text(changed, encoding="utf-8")
    return f"Replaced {count if replace_all else 1} occurrence(s) in {_shown(root, path)}"


def _walk(root: Path, base: Path, expired: Expired) -> Iterator[Path]:
    """Files under ``base`` (itself, if a file), skipping VCS and dependency directories."""
    if base.is_file():
        yield base
        return
    for directory, dirs, files in os.walk(base):
        if expired():
            raise ToolError("timed out; narrow the path or pattern")
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(directory) / name
            real = Path(os.path.realpath(path))
            if real == root or root in real.parents:
                yield path


def glob(root: Path, arguments: dict[str, Any], expired: Expired) -> str:
    """Files under ``path`` whose relative path matches ``pattern`` (``**`` spans directories)."""
    pattern = text_arg(arguments, "pattern")
    base = confine(root, text_arg(arguments, "path", required=False) or ".")
    if not pattern or pattern.startswith("/") or ".." in Path(pattern).parts:
        raise ToolError("the pattern must be relative and stay inside the directory (no '..')")
    found = [p for p in _walk(root, base, expired) if _glob_match(p.relative_to(base).as_posix(), pattern)]
    if not found:
        return "No files found"
    shown = [_shown(root, p) for p in found[:GLOB_MAX_RESULTS]]
    if len(found) > GLOB_MAX_RESULTS:
        shown.append(f"[{len(found) - GLOB_MAX_RESULTS} more files]")
    return "\n".join(shown)


def _glob_match(relative: str, pattern: str) -> bool:
    # "**/" also matches zero directories, as in shells with globstar; fnmatch's "*" spans "/",
    # so a pattern without a slash is matched against the file name alone.
    if "/" not in pattern:
        return fnmatch.fnmatchcase(relative.rsplit("/", 1)[-1], pattern)
    return fnmatch.fnmatchcase(relative, pattern) or (
        pattern.startswith("**/") and fnmatch.fnmatchcase(relative, pattern[3:])
    )


def grep(root: Path, arguments: dict[str, Any], expired: Expired) -> str:
    """``path:line:text`` for each line matching a Python regex (or matching files only)."""
    flags = re.IGNORECASE if arguments.get("ignore_case") is True else 0
    try:
        regex = re.compile(text_arg(arguments, "pattern"), flags)
    except re.error as exc:
        raise ToolError(f"invalid regular expression: {exc}") from None
    base = confine(root, text_arg(arguments, "path", required=False) or ".")
    only = text_arg(arguments, "glob", required=False)
    files_only = arguments.get("files_only") is True
    lines: list[str] = []
    for path in _walk(root, base, expired):
        if only and not _glob_match(path.relative_to(base).as_posix(), only):
            continue
        try:
            if path.stat().st_size > GREP_MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue  # binary
        shown = _shown(root, path)
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if regex.search(line):
                lines.append(shown if files_only else f"{shown}:{number}:{line[:READ_MAX_LINE_CHARS]}")
                if files_only:
                    break
        if len(lines) > GREP_MAX_LINES:
            break
    if not lines:
        return "No matches found"
    if len(lines) > GREP_MAX_LINES:
        return "\n".join([*lines[:GREP_MAX_LINES], "[more matches not shown; narrow the search]"])
    return "\n".join(lines)


def dispatch(name: str, root: Path, arguments: dict[str, Any], expired: Expired) -> Callable[[], str]:
    """A zero-argument call running file tool ``name`` (for a worker thread)."""
    if name == "Read":
        return lambda: read(root, arguments)
    if name == "Write":
        return lambda: write(root, arguments)
    if name == "Edit":
        return lambda: edit(root, arguments)
    if name == "Glob":
        return lambda: glob(root, arguments, expired)
    if name == "Grep":
        return lambda: grep(root, arguments, expired)
    raise ToolError(f"there is no built-in tool {name!r}")


def _worker_main() -> None:
    """``Grep`` out of process: ``{"root": ..., "arguments": ...}`` on stdin, ``{"ok", "text"}`` out.

    A model-supplied regular expression can backtrack for hours and a thread running it cannot
    be stopped; a process can, so :class:`~pytest_omk.agent.tools.BuiltinTools` runs ``Grep``
    here (this file is run as a script, importing only the standard library) and kills it at the
    tool timeout.
    """
    import json
    import sys

    job = json.loads(sys.stdin.read())
    try:
        text = grep(Path(job["root"]), job["arguments"], lambda: False)
        answer = {"ok": True, "text": text}
    except ToolError as exc:
        answer = {"ok": False, "text": str(exc)}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    _worker_main()
