"""Deterministic sharding for CI matrices: ``--omk-shard K/N`` runs the K-th of N contiguous blocks.

Every shard collects the same items in the same order, so a shard is a pure function of that
list: block K holds items ``⌊(K-1)·L/N⌋ … ⌊K·L/N⌋-1`` of the L selected items. Contiguous blocks
keep each file's samples together and let ``python -m pytest_omk merge`` rebuild the one-run order
by concatenating the shards' reports in shard order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from pytest_omk.errors import ConfigError

T = TypeVar("T")
_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def split(self, items: Sequence[T]) -> tuple[list[T], list[T]]:
        """``(selected, deselected)``: this shard's block of ``items`` and the rest."""
        start = (self.index - 1) * len(items) // self.count
        stop = self.index * len(items) // self.count
        return list(items[start:stop]), [*items[:start], *items[stop:]]


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
