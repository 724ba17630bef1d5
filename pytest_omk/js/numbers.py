"""JavaScript number arithmetic: ``Number(x.toFixed(n))`` rounding, left-to-right sums, the
sample standard deviation the reference computes.

``toFixed`` rounds half-up on the exact binary value of the double (``(2.675).toFixed(2)`` is
``"2.67"`` because 2.675 is stored a little below it), which ``Decimal(x)`` reproduces exactly;
Python's ``round`` rounds half to even and is not the reference's rounding.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal

_CENT = Decimal("0.01")
_MILLI = Decimal("0.001")
_WHOLE_QUANTA_BELOW = 2.0**52


def to_fixed(value: float, digits: int) -> float:
    """``Number(value.toFixed(digits))``: half-up on the exact binary value."""
    return float(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def round2(x: float) -> float:
    """Round like ``Number(x.toFixed(2))``: half-up on the exact binary value (2.675 → 2.67, 0.125 → 0.13)."""
    return _half_up(x, 100, _CENT)


def round3(x: float) -> float:
    """Round half-up to 3 decimals on the exact binary value (the precision of standard deviations)."""
    return _half_up(x, 1000, _MILLI)


def _half_up(x: float, scale: int, quantum: Decimal) -> float:
    scaled = x * scale
    # Most values are already whole quanta (5, 4.5, 3.25): when ``x * scale`` comes out a whole
    # number n, x lies within a rounding error of n / scale, far from any halfway point, so the
    # exact decimal rounding would give n / scale too, and dividing gives the same nearest float.
    # (Below 2**52 that error stays under half a quantum.) Everything else takes the exact path.
    if scaled.is_integer() and abs(scaled) < _WHOLE_QUANTA_BELOW:
        return scaled / scale
    return float(Decimal(x).quantize(quantum, rounding=ROUND_HALF_UP))


def sample_sd(values: Sequence[float]) -> float | None:
    """Sample standard deviation (n − 1), 3 decimals; ``None`` below two values (omk-semantics §10.5).

    The project's one standard deviation (judge replicates, repeats, variants): mean and variance
    are left-to-right sums, as the reference's JavaScript computes them.
    """
    if len(values) < 2:
        return None
    mean = js_sum(values) / len(values)
    variance = js_sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return round3(math.sqrt(variance))


def js_sum(values: Iterable[float]) -> float:
    """Left-to-right floating-point sum, as a JavaScript loop or ``reduce`` computes it."""
    total = 0.0
    for value in values:
        total += value
    return total
