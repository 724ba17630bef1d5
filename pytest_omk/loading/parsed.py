"""What both parsers share: the nesting limit, YAML 1.1's ambiguous scalars, JavaScript's numbers.

Apart from :mod:`.parse` so that the YAML reader (:mod:`.yaml_parse`, imported only for YAML
files) and validation can use them without importing each other.
"""

from __future__ import annotations

MAX_DEPTH = 64
_MAX_SAFE_INTEGER = 2**53 - 1


class AmbiguousScalar(str):
    """A plain YAML scalar kept as text that YAML 1.1 readers would turn into a boolean or a date."""

    kind: str = "YAML 1.1 boolean"
    """``"YAML 1.1 boolean"`` or ``"date"``: what another reader would make of it."""


class DateScalar(AmbiguousScalar):
    """A plain YAML scalar that YAML 1.1 readers would turn into a date."""

    kind = "date"


def js_number(value: int) -> int | float:
    """``value`` as JavaScript holds it: exact while safe, else the nearest double (or infinity)."""
    if abs(value) <= _MAX_SAFE_INTEGER:
        return value
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")
