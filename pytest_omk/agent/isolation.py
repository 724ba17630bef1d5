"""A fresh temporary copy of the sample's working directory for each agent run.

The agent edits files and runs commands; it must never change the user's checkout. Each run
therefore gets its own copy of the sample's ``cwd`` (or an empty directory when the sample has no
``cwd``, as the format's owner does for a baseline without one), removed when the run ends, even
when it fails or is cancelled. Concurrent samples never share a copy.

The copy is capped (:data:`MAX_COPY_BYTES`, :data:`MAX_COPY_ENTRIES`), holds regular files,
directories and links only, and is made in a worker thread (see :func:`working_copy`).

Symbolic links are copied as links, not followed (a link to a large tree or to a device would
otherwise be copied whole). An absolute link that points into the original directory is
re-pointed into the copy, so writing through it cannot reach the original.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import AsyncIterator
from pathlib import Path

from pytest_omk.errors import ExecutionError
from pytest_omk.models.run import ExecutionRequest

COPY_DIR_NAME = "work"
"""The working copy is ``<temp dir>/work``: the temporary directory's random name stays out of
the way, and the copy keeps a stable last path component."""


def _repoint_links(original: Path, copy: Path) -> None:
    for directory, dirs, files in os.walk(copy):
        for name in [*dirs, *files]:
            link = Path(directory) / name
            if not link.is_symlink():
                continue
            target = Path(os.readlink(link))
            if not target.is_absolute():
                continue
            with contextlib.suppress(ValueError):
                inside = target.relative_to(original)
                link.unlink()
                link.symlink_to(copy / inside)


MAX_COPY_BYTES = 256 * 1024 * 1024
"""Largest working copy (sum of regular file sizes); a larger ``cwd`` is an execution error."""
MAX_COPY_ENTRIES = 50_000
"""Most files and directories in a working copy."""


def inside(path: Path, tree: Path) -> bool:
    """Whether the real path of ``path`` is ``tree``'s real path or below it."""
    real, top = Path(os.path.realpath(path)), Path(os.path.realpath(tree))
    return real == top or top in real.parents


def source_directory(request: ExecutionRequest) -> Path | None:
    """The directory to copy: the request's ``cwd`` when the sample declares one, else ``None``.

    A request built by the pipeline always carries a ``cwd`` (the sample file's directory when the
    sample has none); only a sample's own ``cwd`` is copied, so an agent without one starts empty.
    Requests made without a sample (Python callers) copy their ``cwd`` when given. A sample's
    ``cwd`` must stay inside the sample file's directory tree (symbolic links resolved): ``/`` or
    ``../../..`` would hand the agent the user's files.
    """
    if request.sample is not None and request.sample.cwd is None:
        return None
    base = request.mock_base_dir
    if (
        request.sample is not None
        and request.cwd is not None
        and base is not None
        and not inside(request.cwd, base)
    ):
        raise ExecutionError(
            f"cwd {request.sample.cwd!r} leads outside the sample file's directory {base}; "
            "use a directory inside it"
        )
    return request.cwd


class _Budget:
    """Counts what a copy has taken; ``stop`` ends it early (a cancelled run)."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop, self.bytes, self.entries = stop, 0, 0

    def take(self, size: int) -> None:
        if self.stop.is_set():
            raise ExecutionError("the working copy was cancelled")
        self.bytes += size
        self.entries += 1
        if self.bytes > MAX_COPY_BYTES or self.entries > MAX_COPY_ENTRIES:
            raise ExecutionError(
                f"the working directory is larger than the copy limit ({MAX_COPY_BYTES} bytes, "
                f"{MAX_COPY_ENTRIES} entries)"
            )


def _copy_tree(source: Path, copy: Path, stop: threading.Event) -> None:
    budget = _Budget(stop)

    def copy_regular(src: str, dst: str) -> None:
        # Only regular files: reading a FIFO or a device would block or never end.
        info = os.lstat(src)
        if not stat.S_ISREG(info.st_mode):
            return
        budget.take(info.st_size)
        shutil.copy2(src, dst)

    def count(directory: str, names: list[str]) -> set[str]:
        budget.take(0)
        return set()

    if not source.is_dir():
        raise ExecutionError(f"the sample's working directory {source} does not exist")
    try:
        shutil.copytree(source, copy, symlinks=True, copy_function=copy_regular, ignore=count)
    except shutil.Error as exc:
        raise ExecutionError(f"cannot copy the working directory {source}: {exc}") from None
    except OSError as exc:
        raise ExecutionError(f"cannot copy the working directory {source}: {exc}") from None
    _repoint_links(Path(os.path.realpath(source)), copy)
    if os.path.realpath(source) != str(source):
        _repoint_links(source, copy)


@contextlib.asynccontextmanager
async def working_copy(source: Path | None) -> AsyncIterator[Path]:
    """Yield the real path of a fresh copy of ``source`` (an empty directory when ``None``).

    The copy runs in a worker thread so that a large ``cwd`` does not stall other samples; a
    cancelled run stops the copy (checked at every file) and waits for it before removing.
    """
    holder = Path(tempfile.mkdtemp(prefix="omk-agent-"))
    # Searchable, not listable: a sandboxed Bash dropped to an unprivileged user (pytest as root)
    # must reach the copy by its absolute path.
    os.chmod(holder, 0o711)
    try:
        copy = holder / COPY_DIR_NAME
        if source is None:
            copy.mkdir()
        else:
            stop = threading.Event()
            job = asyncio.ensure_future(asyncio.to_thread(_copy_tree, source, copy, stop))
            try:
                await asyncio.shield(job)
            except asyncio.CancelledError:
                stop.set()
                await asyncio.wait([job])
                raise
        yield Path(os.path.realpath(copy))
    finally:
        _remove(holder)


def _remove(path: Path) -> None:
    """Delete ``path`` even when a tool left read-only files or directories behind."""

    def retry_writable(_func: object, target: str, _exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(target), 0o700)
            if os.path.isdir(target) and not os.path.islink(target):
                os.chmod(target, 0o700)
                shutil.rmtree(target, ignore_errors=True)
            else:
                os.unlink(target)

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry_writable)
    else:
        shutil.rmtree(path, onerror=retry_writable)
