"""Starting a child process in a session of its own, so that ending it ends everything it started.

Commands and tools run with ``start_new_session=True``: a terminal's Ctrl-C never reaches them, and
the call that started one must end its whole process group itself (on timeout, on cancellation).
One window is easy to miss: a call cancelled *while the child is being started*. asyncio then
kills only the direct child (a shell), and whatever that shell already put in the background lives
on. :func:`start_session` closes the window by finishing the start and ending the session before
the cancellation goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from pytest_omk._util.proctree import kill_group


async def start_session(program: str, *args: str, **kwargs: Any) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec`` in a new session, safe against cancellation mid-start."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(program, *args, start_new_session=True, **kwargs)
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        # The start itself takes milliseconds; let it finish, then end the whole session.
        with contextlib.suppress(Exception):
            process = await starting
            kill_group(process.pid)
            await process.wait()
        raise
