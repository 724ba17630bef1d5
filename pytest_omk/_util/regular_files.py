"""Reading a file someone else may have planted: a regular file, not through a link, size-capped.

A committed file is hostile input. Opening it must not follow a symbolic link (to ``/dev/zero``,
read until memory runs out, or to a file outside the tree it should come from), block on a FIFO
(``open`` itself waits for a writer), or read a multi-gigabyte file whole. :func:`read_regular`
opens without following a final link and without blocking, checks what it opened with ``fstat``
(so no other file can take its place between the check and the read) and reads at most the limit.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


class RefusedFile(Exception):
    """The file exists but is not read; ``reason`` completes "the file ..."."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_regular(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises ``FileNotFoundError`` (also when a parent is not a directory), :class:`RefusedFile` for a
    link, a FIFO, a device or a socket, or a file larger than ``limit``, and ``OSError`` otherwise.
    """
    try:
        fd = os.open(path, _FLAGS)
    except NotADirectoryError as exc:
        raise FileNotFoundError(str(path)) from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RefusedFile("is not a regular file (a symbolic link; links are not followed)") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RefusedFile("is not a regular file (a FIFO, a device, a socket or a directory)")
        if info.st_size > limit:
            raise RefusedFile(f"is larger than {limit} bytes ({info.st_size} bytes)")
        # One read of what fstat said, plus a byte to see growth: a regular file gives all it has
        # up to the count asked, so the usual case is one system call, not a second one to see EOF.
        data = os.read(fd, info.st_size + 1)
        if len(data) != info.st_size:  # it grew or shrank since fstat: read on to the limit
            data += _read_up_to(fd, limit + 1 - len(data))
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew since fstat
        raise RefusedFile(f"is larger than {limit} bytes")
    return data


def _read_up_to(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
