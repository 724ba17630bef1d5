"""A Ctrl-C whose traceback holds an entry without a line number still ends as an interruption.

Python 3.11 gives such an entry ``tb_lineno = None`` (the frame stopped in compiler-made cleanup
code of a ``with`` or ``except`` block); pytest's rendering of the interruption subtracted from it
and crashed, so the run ended with an internal error and exit status 1. A real Ctrl-C lands there
rarely (it once failed the interruption test in CI); the test module below raises a
``KeyboardInterrupt`` carrying such an entry on purpose.
"""

from __future__ import annotations

import types

import pytest

from pytest_omk.tracebacks import drop_lineless_entries

INTERRUPTED_WITH_A_LINELESS_ENTRY = '''
import dis, sys, types


def _stopped_in_cleanup():
    try:
        pass
    except ValueError:
        pass
    return sys._getframe()


def test_interrupted():
    frame = _stopped_in_cleanup()
    offset = next(i.offset for i in dis.get_instructions(frame.f_code) if i.positions.lineno is None)
    lineless = types.TracebackType(None, frame, offset, -1)
    assert lineless.tb_lineno is None
    raise KeyboardInterrupt().with_traceback(lineless)
'''


def _lineless_entry() -> types.TracebackType:
    import contextlib
    import dis
    import sys

    def stopped_in_cleanup() -> types.FrameType:
        with contextlib.suppress(ValueError):  # its exit has compiler-made cleanup code
            pass
        return sys._getframe()

    frame = stopped_in_cleanup()
    offset = next(i.offset for i in dis.get_instructions(frame.f_code) if i.positions and i.positions.lineno is None)
    return types.TracebackType(None, frame, offset, -1)


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
