"""The calls made for samples that never ran: counted in the run's usage, apart, as not graded.

A run starts its samples' calls ahead of pytest's run loop. When it is cut short (``-x``,
``--maxfail``, Ctrl-C) the started samples that never ran leave calls that were answered and paid
for, but no record carries them. The launcher keeps their call logs; this module adds them to the
summary's ``usage`` (each role's ``calls``, ``live``, tokens, cost and ``spent``, with ``notGraded``
saying how many of them no sample was graded on) and words the terminal's line. One rule
(docs/reporting.md, "Every call is counted"): the summary counts every call the run made. No pytest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_omk.models.accounting import ROLES, CallLog, Role, Usage
from pytest_omk.report.calls_record import model_calls, role_record
from pytest_omk.report.usage import usage_totals


def not_graded_usage(logs: Iterable[CallLog]) -> dict[Role, Usage]:
    """The calls of ``logs`` (samples started and never graded), summed by role."""
    records = [record for log in logs for record in log.records]
    return {role: Usage.of(r for r in records if r.role == role) for role in ROLES}


def with_not_graded(
    rows: Sequence[Mapping[str, Any]], not_graded: Mapping[Role, Usage]
) -> dict[str, dict[str, Any]]:
    """The run's ``usage``: the graded samples' (``rows``) and the calls of ``not_graded`` summed as
    one more sample's, each role with ``notGraded`` saying how many of its calls were those."""
    calls = {role: extra.calls for role, extra in not_graded.items() if extra.calls}
    unrun = {"usage": {role: role_record(not_graded[role]) for role in calls}}
    usage = usage_totals([*rows, unrun])
    for role, count in calls.items():
        usage[role]["notGraded"] = count
    return usage


def with_not_graded_calls(
    rows: Sequence[Mapping[str, Any]], not_graded: Mapping[Role, Usage]
) -> dict[str, int]:
    """The summary's ``modelCalls`` (live and replayed, every role): the graded samples' and those of
    ``not_graded``, so that the terminal's ``model calls:`` line counts every call made."""
    extra = model_calls(not_graded)
    return {key: extra[key] + sum(int(row["modelCalls"][key]) for row in rows) for key in extra}


def not_graded_lines(usage: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """``omk: 8 calls for samples not run (not graded), in the usage and cost totals``, or nothing."""
    calls = sum(int(part.get("notGraded") or 0) for part in usage.values())
    if not calls:
        return []
    return [
        f"omk: {calls} call{'' if calls == 1 else 's'} for samples not run (not graded), "
        "in the usage and cost totals"
    ]


def cut_lines(cut: int) -> list[str]:
    """``omk: 3 calls cut off in flight by the stop (sent, cost unknown)``, or nothing."""
    if not cut:
        return []
    return [f"omk: {cut} call{'' if cut == 1 else 's'} cut off in flight by the stop (sent, cost unknown)"]
