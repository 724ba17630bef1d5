"""Tracebacks pytest can render: entries without a line number are dropped from an interruption.

A workaround of a pytest bug (kept apart from :mod:`pytest_omk.plugin.compat`, which holds the uses
of pytest's private API): it touches only the exception objects, no pytest internals.

Since Python 3.11 a traceback entry's ``tb_lineno`` is ``None`` when its frame was stopped at an
instruction that belongs to no source line (the compiler's cleanup code of ``with`` and ``except``
blocks, among others). pytest (9.0 to 9.2 at least) subtracts one from it while rendering the
traceback of a Ctrl-C and dies with a ``TypeError``: the run then ends with an internal error and
exit status 1 instead of the interruption's 2. A Ctrl-C lands wherever the main thread is, and
while it waits for model calls it runs the status line's loop of ``with`` blocks, so about one
interrupted run in a hundred hit it. Such an entry has no line to show anyway.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast


def _chained(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every exception it chains (``__cause__``, ``__context__``), each once."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def drop_lineless_entries(exc: BaseException) -> int:
    """Unlink the traceback entries without a line number below the first one, in ``exc`` and its
    chain (tracebacks are linked lists whose ``tb_next`` may be reassigned); returns how many."""
    dropped = 0
    for current in _chained(exc):
        entry = current.__traceback__
        while entry is not None and entry.tb_next is not None:
            # typeshed says int; the interpreter gives None for such an entry.
            if cast("int | None", entry.tb_next.tb_lineno) is None:
                entry.tb_next = entry.tb_next.tb_next
                dropped += 1
            else:
                entry = entry.tb_next
    return dropped
