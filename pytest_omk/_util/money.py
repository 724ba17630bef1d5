"""Money as every report line shows it: one format for the score table, the summary, the budget
lines and ``merge`` (two significant digits below a cent, never below cents)."""

from __future__ import annotations

import math


def money(value: float | None) -> str:
    """Dollars with two significant digits below a cent (``$0.000039``), ``-`` when unknown."""
    if value is None:
        return "-"
    if value == 0:
        return "$0"
    decimals = max(2, 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    if decimals > 2:
        # Significant digits, not padding: $0.00004 rather than $0.000040, never below cents.
        whole, _, fraction = text.partition(".")
        text = f"{whole}.{fraction.rstrip('0').ljust(2, '0')}"
    return f"${text}"
