"""A fresh temporary copy of the sample's working directory for each agent run.

The agent edits files and runs commands; it must never change the user's checkout. Each run
therefore gets its own copy of the sample's ``cwd`` (or an empty directory when the sample has no
``cwd``, as the format's owner does for a baseline without one), removed when the run ends, even
when it fails or is cancelled. Concurrent samples never share a copy.

Symbolic links are copied as links, not followed (a link to a large tree or to a device would
otherwise be copied whole). An absolute link that points into the original directory is
re-pointed into the copy, so writing through it cannot reach the original.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
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


def source_directory(request: ExecutionRequest) -> Path | None:
    """The directory to copy: the request's ``cwd`` when the sample declares one, else ``None``.

    A request built by the pipeline always carries a ``cwd`` (the sample file's directory when the
    sample has none); only a sample's own ``cwd`` is copied, so an agent without one starts empty.
    Requests made without a sample (Python callers) copy their ``cwd`` when given.
    """
    if request.sample is not None and request.sample.cwd is None:
        return None
    return request.cwd


@contextlib.contextmanager
def working_copy(source: Path | None) -> Iterator[Path]:
    """Yield the real path of a fresh copy of ``source`` (an empty directory when ``None``).

    The copy is made synchronously on purpose: a copy running in a worker thread could not be
    stopped when the run is cancelled, and would race the removal.
    """
    holder = Path(tempfile.mkdtemp(prefix="omk-agent-"))
    try:
        copy = holder / COPY_DIR_NAME
        if source is None:
            copy.mkdir()
        else:
            if not source.is_dir():
                raise ExecutionError(f"the sample's working directory {source} does not exist")
            try:
                shutil.copytree(source, copy, symlinks=True)
            except (OSError, shutil.Error) as exc:
                raise ExecutionError(f"cannot copy the working directory {source}: {exc}") from None
            _repoint_links(Path(os.path.realpath(source)), copy)
            if os.path.realpath(source) != str(source):
                _repoint_links(source, copy)
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
