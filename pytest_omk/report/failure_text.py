"""The one-line failure text of a sample item: which checks failed.

A JUnit ``<failure>`` message is the item's failure line, so naming the failed checks there tells a
CI dashboard which checks failed without opening the log. The verdict says how many checks failed
(:class:`~pytest_omk.grade.verdict.ChecksFailed`); the names come from the record, so the text is
assembled from values and never re-parsed.
"""

from __future__ import annotations

from pytest_omk.grade.verdict import Verdict
from pytest_omk.models.report import SampleRecord

_LISTED = 5


def failed_check_names(record: SampleRecord, *, strict: bool) -> list[str]:
    """``assertion <i>: <type>`` and ``rubric: <name>`` of each failed check, in report order."""
    bad = ("fail", "missing") if strict else ("fail",)
    names = [f"assertion {a.index}: {a.type}" for a in record.assertions if a.status in bad]
    names += [f"rubric: {name}" for name, entry in record.rubric.items() if entry.status in bad]
    return names


def failure_line(graded: Verdict, record: SampleRecord, *, strict: bool) -> str:
    """The verdict's failure; for failed checks ``N of M checks failed: <names> (composite X)``."""
    if graded.checks_failed is None:
        return graded.failure or ""
    return graded.checks_failed.text(listed(failed_check_names(record, strict=strict)))


def listed(names: list[str]) -> str:
    """``a, b, c`` (at most five, then ``and N more``)."""
    shown = ", ".join(names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")
