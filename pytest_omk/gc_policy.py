"""How the run keeps CPython's cyclic garbage collector out of its way (no pytest here).

Validating thousands of samples allocates millions of long-lived objects, and the collector would
rescan them again and again (measured: most of the time of a 10,000-sample collection). Collection
therefore runs with the collector paused, and its survivors are frozen out of its sight. While
items run, what each allocates is mostly short-lived: young collections every 700 allocations
would scan it again and again (measured: seconds on a 10,000-sample replay, freeing next to
nothing), so the young generation's threshold is raised for the run loop.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

RUN_LOOP_GC_THRESHOLD = 50_000
"""Allocations between young-generation collections while items run (CPython's default: 700)."""


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the collector; on the way out, freeze what survived and resume it."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


@contextlib.contextmanager
def young_collections_spaced(threshold: int = RUN_LOOP_GC_THRESHOLD) -> Iterator[None]:
    """Collect the young generation at most every ``threshold`` allocations, then restore the thresholds."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], threshold), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
