"""A Ctrl-C whose traceback holds an entry without a line number still ends as an interruption.

Python 3.11 gives such an entry ``tb_lineno = None`` (the frame stopped in compiler-made cleanup
code of a ``with`` or ``except`` block); pytest's rendering of the interruption subtracted from it
and crashed, so the run ended with an internal error and exit status 1. A real Ctrl-C lands there
rarely (it once failed the interruption test in CI); the test module below raises a
``KeyboardInterrupt`` carrying such an entry on purpose.
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from pytest_omk.plugin.tracebacks import drop_lineless_entries

LINELESS_ENTRY = '''
import contextlib, dis, sys, types


def _stopped_in_cleanup():
    with contextlib.suppress(ValueError):  # its exit has compiler-made cleanup code
        pass
    return sys._getframe()


def lineless_entry():
    """A traceback entry of a frame stopped at an instruction of no source line."""
    frame = _stopped_in_cleanup()
    offset = next(i.offset for i in dis.get_instructions(frame.f_code) if i.positions.lineno is None)
    entry = types.TracebackType(None, frame, offset, -1)
    assert entry.tb_lineno is None
    return entry
'''
"""Source of ``lineless_entry()``: run in the pytester module below and, here, through ``exec``."""

INTERRUPTED_WITH_A_LINELESS_ENTRY = (
    LINELESS_ENTRY
    + """

def test_interrupted():
    raise KeyboardInterrupt().with_traceback(lineless_entry())
"""
)


def _lineless_entry() -> types.TracebackType:
    namespace: dict[str, Any] = {}
    exec(LINELESS_ENTRY, namespace)  # this module's own source text
    entry: types.TracebackType = namespace["lineless_entry"]()
    return entry


@pytest.mark.multiprocess
def test_the_run_ends_interrupted_and_says_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_interrupted=INTERRUPTED_WITH_A_LINELESS_ENTRY)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*KeyboardInterrupt*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_lineless_entries_are_unlinked_in_the_exception_and_its_chain() -> None:
    def raised(exc: BaseException) -> BaseException:
        try:
            raise exc
        except BaseException as caught:
            return caught

    cause = raised(ValueError("cause"))
    assert cause.__traceback__ is not None
    cause.__traceback__.tb_next = _lineless_entry()
    interrupt = raised(KeyboardInterrupt())
    assert interrupt.__traceback__ is not None
    interrupt.__traceback__.tb_next = _lineless_entry()
    interrupt.__cause__ = cause
    assert drop_lineless_entries(interrupt) == 2
    for exc in (interrupt, cause):
        entry = exc.__traceback__
        while entry is not None:
            assert entry.tb_lineno is not None
            entry = entry.tb_next
    assert drop_lineless_entries(interrupt) == 0
