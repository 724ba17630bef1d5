"""One-line failure texts: which checks failed, and a ``--tb=line`` representation.

A JUnit ``<failure>`` message is the item's failure line, so naming the failed checks there tells a
CI dashboard which checks failed without opening the log. Under ``--tb=line`` pytest prints both a
failure's full representation and its crash line; a representation with no traceback and the
message as its crash line prints each message once, as ``file:line: message``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _pytest._code.code import ReprExceptionInfo, ReprFileLocation, ReprTraceback

_LISTED = 5


def failed_check_names(record: dict[str, Any], *, strict: bool) -> list[str]:
    """``assertion <i>: <type>`` and ``rubric: <name>`` of each failed check, in report order."""
    bad = ("fail", "missing") if strict else ("fail",)
    names = [f"assertion {a['index']}: {a['type']}" for a in record.get("assertions") or [] if a.get("status") in bad]
    names += [f"rubric: {name}" for name, entry in (record.get("rubric") or {}).items() if entry.get("status") in bad]
    return names


def name_failed_checks(failure: str, record: dict[str, Any], *, strict: bool) -> str:
    """``N of M checks failed (composite X)`` with the failed checks' names after the count."""
    head, marker, tail = failure.partition(" checks failed")
    if not marker:
        return failure
    return f"{head}{marker}: {listed(failed_check_names(record, strict=strict))}{tail}"


def listed(names: list[str]) -> str:
    """``a, b, c`` (at most five, then ``and N more``)."""
    shown = ", ".join(names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def line_repr(path: Path, line: int | None, message: str) -> ReprExceptionInfo:
    """A failure representation printed as one ``path:line: message`` line under ``--tb=line``."""
    crash = ReprFileLocation(str(path), (line or 0) + 1, message)
    return ReprExceptionInfo(reprtraceback=ReprTraceback([], None, "line"), reprcrash=crash)
