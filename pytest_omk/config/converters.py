"""Typed converters for option values: text in, a value out, or a :class:`ValueError` saying what
is allowed (the caller adds the option's name and the value given). No pytest here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Converter = Callable[[str], Any]


def text(value: str) -> str:
    """Any string."""
    return value


def choice(*allowed: str) -> Converter:
    """One of ``allowed``."""

    def convert(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"one of {', '.join(allowed)}")
        return value

    return convert


def boolean(value: str) -> bool:
    """``true``/``false`` (also ``1``/``0``, ``yes``/``no``, ``on``/``off``), as pytest's ini reads it."""
    lowered = value.strip().lower()
    if lowered in ("y", "yes", "t", "true", "on", "1"):
        return True
    if lowered in ("n", "no", "f", "false", "off", "0"):
        return False
    raise ValueError("true or false")


def integer(minimum: int) -> Converter:
    """A whole number >= ``minimum``."""
    allowed = f"an integer >= {minimum}"

    def convert(value: str) -> int:
        try:
            number = int(value.strip())
        except ValueError:
            raise ValueError(allowed) from None
        if number < minimum:
            raise ValueError(allowed)
        return number

    return convert


def number(*, above: float | None = None, low: float | None = None, high: float | None = None) -> Converter:
    """A finite number: ``> above``, or within ``[low, high]`` (either end optional)."""
    if above is not None:
        allowed = f"a number > {above:g}"
    elif low is not None and high is not None:
        allowed = f"a number between {low:g} and {high:g}"
    elif low is not None:
        allowed = f"a number >= {low:g}"
    else:
        allowed = "a number"

    def convert(value: str) -> float:
        try:
            result = float(value.strip())
        except ValueError:
            raise ValueError(allowed) from None
        too_low = (above is not None and result <= above) or (low is not None and result < low)
        if not math.isfinite(result) or too_low or (high is not None and result > high):
            raise ValueError(allowed)
        return result

    return convert


def repeat_count(value: str) -> int | str:
    """``--omk-repeat``: a whole number >= 1, or ``auto`` (repeat until the pass rate is decided)."""
    if value.strip().lower() == "auto":
        return "auto"
    try:
        count = int(value.strip())
    except ValueError:
        raise ValueError("an integer >= 1 or 'auto'") from None
    if count < 1:
        raise ValueError("an integer >= 1 or 'auto'")
    return count
