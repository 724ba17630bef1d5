"""Ending a started sample's calls before they are done, and knowing when they really ended.

A sample's runs are one task on the call loop. Cancelling its concurrent future from pytest's
thread only asks the loop to cancel the task, later; a caller that reports what the sample's calls
did (how many were answered, which were cut) must wait until the cancellation has reached every
call. :class:`Tracked` keeps each sample's task; :func:`cut_off` cancels it with
:data:`~pytest_omk.execute.calls.CUT_OFF` (a call already sent is counted, as every cancelled
call is: ``execute/in_flight.py``) and returns once it is done. No pytest here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from pytest_omk.execute.calls import CUT_OFF

T = TypeVar("T")


@dataclass
class Tracked:
    """A started sample's task on the call loop (``None`` until it runs)."""

    task: asyncio.Task[Any] | None = None


async def tracked(runs: Coroutine[Any, Any, T], slot: Tracked) -> T:
    """``runs``, its task noted in ``slot``."""
    slot.task = asyncio.current_task()
    return await runs


async def cut_off(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` as a sample's time limit does, and wait until it has ended."""
    task.cancel(CUT_OFF)
    await asyncio.wait({task})
