"""Running pytest in a child process with a pseudo-terminal or a pipe as its output (status lines)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.support.runner import QUIET_PLUGINS

ARGS = [
    "-m",
    "pytest",
    "-p",
    "no:cacheprovider",
    *QUIET_PLUGINS,
    "--omk-executor=openai",
    "--omk-judge=none",
    "--omk-record-mode=off",
    "--omk-concurrency=1",
]


def run_on_pty(cwd: Path, env: dict[str, str], *args: str) -> str:
    """Run pytest with a pseudo-terminal as its stdout and stderr; return everything it wrote."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, *ARGS, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    process.wait(timeout=120)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def run_on_pipe(cwd: Path, env: dict[str, str], *args: str) -> str:
    """Run pytest with pipes as its stdout and stderr; return its stdout."""
    done = subprocess.run(
        [sys.executable, *ARGS, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    return done.stdout
