"""A call cancelled while its child is being started leaves nothing of that child's session.

Before :func:`start_session`, asyncio ended such a child by killing only the shell, and what the
shell had already put in the background (here a long ``sleep``) lived on: under xdist, Ctrl-C at
the wrong moment left command executors' jobs running.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from pytest_omk._util.proctree import kill_group
from pytest_omk.execute.spawn import start_session

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")


def running(argv: bytes) -> list[int]:
    """Live (not zombie) processes whose command line is exactly ``argv``."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if (proc / "cmdline").read_bytes() == argv and (proc / "stat").read_text().rsplit(")", 1)[
                1
            ].split()[0] != "Z":
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("steps", range(12))
def test_cancelled_mid_start_leaves_no_process_of_the_session(steps: int) -> None:
    # A duration no other process uses, so the scan below finds only this test's sleep.
    duration = f"{300 + steps}.{os.getpid()}"

    async def call() -> None:
        # As the command executor does: once started, a cancellation ends the whole session.
        process = await start_session("sh", "-c", f"sleep {duration} & wait")
        try:
            await process.wait()
        except asyncio.CancelledError:
            kill_group(process.pid)
            raise

    async def main() -> None:
        task = asyncio.ensure_future(call())
        for _ in range(steps):  # cancel at a different point of the start each time
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    # SIGKILL is delivered asynchronously; the sleep would live 300 s, so gone within a minute
    # means it was killed, however loaded the machine.
    argv = b"sleep\x00" + duration.encode() + b"\x00"
    deadline = time.monotonic() + 60
    while running(argv) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running(argv) == []
