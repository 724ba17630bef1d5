"""A sample's outcome read again from its record: what ``merge`` trusts instead of the stated one.

A shard's report says each sample's outcome, but the readings and scores beside it say what the
outcome must be: the same rules as the verdict (:mod:`pytest_omk.grade.verdict`), applied to the
record's statuses, composite and repeat pass rate. ``merge`` keeps the worse of the two, so a report
edited (or written by a broken run) to say ``passed`` over failed readings never merges green.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RANK = {"passed": 0, "xpassed": 1, "xfailed": 1, "skipped": 1, "unknown": 2, "failed": 3, "error": 4}
"""How bad an outcome is for the run: ``failed`` and ``error`` fail it."""


def recomputed_outcome(row: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    """The outcome ``row`` (a report sample) must have under the run's ``config`` section."""
    if row.get("error"):
        return "error"
    statuses = [str(entry.get("status")) for entry in row.get("assertions") or []]
    statuses += [str(entry.get("status")) for entry in (row.get("rubric") or {}).values()]
    if row.get("execution") is None and not row.get("repeats"):
        return "skipped"  # nothing ran: skipped (no executor, unmet requires ...) or never set up
    failed = _failed(row, statuses, config)
    if not failed and statuses and all(status == "missing" for status in statuses):
        return "skipped"  # nothing could be graded: never a pass
    if (row.get("metadata") or {}).get("tripwire") or row.get("knownFailure"):
        return "xfailed" if failed else "xpassed"
    return "failed" if failed else "passed"


def _failed(row: Mapping[str, Any], statuses: list[str], config: Mapping[str, Any]) -> bool:
    strict = bool(config.get("strict"))
    if any(status == "fail" or (strict and status == "missing") for status in statuses):
        return True
    repeats = row.get("repeats")
    if repeats:
        return float(repeats.get("passRate", 0)) < float(config.get("minPassRate", 1))
    minimum = config.get("minComposite")
    composite = (row.get("scores") or {}).get("composite")
    return minimum is not None and (composite is None or composite < minimum)


def worse(stated: str | None, recomputed: str) -> str:
    """The worse of the stated and the recomputed outcome (the recomputed one on a tie)."""
    if stated is None or RANK.get(stated, RANK["unknown"]) <= RANK[recomputed]:
        return recomputed
    return stated
