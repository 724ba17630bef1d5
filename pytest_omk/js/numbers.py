"""JavaScript number rounding: ``Number(x.toFixed(n))`` for any number of decimals.

``toFixed`` rounds half-up on the exact binary value of the double (``(2.675).toFixed(2)`` is
``"2.67"`` because 2.675 is stored a little below it), which ``Decimal(x)`` reproduces exactly;
Python's ``round`` rounds half to even and is not the reference's rounding.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


def to_fixed(value: float, digits: int) -> float:
    """``Number(value.toFixed(digits))``: half-up on the exact binary value."""
    return float(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
