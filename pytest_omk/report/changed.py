"""``--omk-changed``'s part of the summary: the samples carried from the baseline. No pytest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def carried_lines(rows: Sequence[Mapping[str, Any]], baseline: str | None) -> list[str]:
    """``--omk-changed: 999 carried from base.json (inputs unchanged; not run; 2 failed there)``."""
    carried = [row for row in rows if row.get("carried")]
    if not carried:
        return []
    failed = sum(1 for row in carried if row.get("outcome") in ("failed", "error"))
    tail = f"; {failed} failed there" if failed else ""
    return [f"--omk-changed: {len(carried)} carried from {baseline} (inputs unchanged; not run{tail})"]
