"""Deterministic sharding for CI matrices: ``--omk-shard K/N`` runs the K-th of N contiguous blocks.

Every shard collects the same items in the same (collection) order, so a shard is a pure function
of that list: by count, block K holds items ``⌊(K-1)·L/N⌋ … ⌊K·L/N⌋-1`` of the L selected items; by
durations, the blocks are those of :func:`weighted_bounds`. Contiguous blocks keep each file's
samples together and let ``python -m pytest_omk merge`` rebuild the one-run order by concatenating
the shards' reports in shard order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_omk.errors import ConfigError

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def bounds(self, length: int) -> tuple[int, int]:
        """``[start, stop)`` of this shard's block of ``length`` items cut by count."""
        return (self.index - 1) * length // self.count, self.index * length // self.count


def parse_shard(spec: str) -> Shard:
    """``"K/N"`` → :class:`Shard`; :class:`ConfigError` saying what is allowed otherwise."""
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise ConfigError(
            f"--omk-shard {spec!r} must look like K/N (for example 2/3: the second of three shards)"
        )
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ConfigError(f"--omk-shard {spec!r}: in K/N, N must be at least 1 and K between 1 and N")
    return Shard(index, count)


def weighted_bounds(weights: Sequence[float], count: int) -> list[tuple[int, int]]:
    """``count`` contiguous blocks ``[start, stop)`` of ``weights`` whose heaviest block is as light as
    contiguous blocks allow (each block non-empty while there are enough items).

    Deterministic: weights are compared as whole microseconds (a float sum's rounding must not move
    a boundary between two machines), the smallest feasible cap is found by bisection, then the
    blocks are filled greedily from the left under it.
    """
    units = [max(1, round(w * 1_000_000)) for w in weights]
    low, high = max(units, default=1), max(sum(units), 1)
    while low < high:
        middle = (low + high) // 2
        if len(_fill(units, count, middle)) <= count:
            high = middle
        else:
            low = middle + 1
    bounds = _fill(units, count, low)
    while len(bounds) < count:  # fewer items than shards: the last shards are empty
        bounds.append((len(units), len(units)))
    return bounds


def _fill(units: Sequence[int], count: int, cap: int) -> list[tuple[int, int]]:
    """Greedy blocks under ``cap``, leaving at least one item for each block still to come."""
    bounds: list[tuple[int, int]] = []
    start = 0
    while start < len(units):
        reserve = max(count - len(bounds) - 1, 0)
        # The block's first item always goes in: one item heavier than the cap is a block alone.
        stop, total = start + 1, units[start]
        while stop < len(units) and total + units[stop] <= cap and len(units) - stop - 1 >= reserve:
            total += units[stop]
            stop += 1
        bounds.append((start, stop))
        start = stop
    return bounds
