"""How the run keeps CPython's cyclic garbage collector out of its way (no pytest here).

Validating thousands of samples allocates millions of long-lived objects, and the collector would
rescan them again and again (measured: most of the time of a 10,000-sample collection). Collection
therefore runs with the collector paused, and its survivors are frozen out of its sight. While
items run, what each allocates is mostly short-lived: young collections every 700 allocations
would scan it again and again (measured: seconds on a 10,000-sample replay, freeing next to
nothing), so the young generation's threshold is raised for the run loop. At the end of the run,
the reports' first allocations would set off a full collection of everything the run kept (and
pytest collects once more at exit): automatic collection waits until the plugins unconfigure.
Once pytest has collected at unconfigure, what a large run still holds is frozen as well: it is
reachable from what collection froze (the items hold the config, which holds every plugin and
report), so the collections still to come, pytest's cleanup and the interpreter's at exit, would
only traverse it again (1.1 s at the end of a 10,000-sample replay) and free none of it. A small
run is left as it is: its traversal costs nothing worth saving, and an in-process run inside
another (pytester, a script calling ``pytest.main`` again and again) would otherwise freeze its
host's garbage of the moment for good.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator

RUN_LOOP_GC_THRESHOLD = 50_000
"""Allocations between young-generation collections while items run (CPython's default: 700)."""
SURVIVORS_FROZEN_FROM = 1_000
"""Sample items from which a run freezes what it still holds at its end (:func:`freeze_survivors`)."""


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


def collections_deferred() -> Callable[[], None]:
    """Stop automatic collection; returns the function that resumes it (if it was on)."""
    was_enabled = gc.isenabled()
    gc.disable()

    def resume() -> None:
        if was_enabled:
            gc.enable()

    return resume


def freeze_survivors(samples: int) -> None:
    """Freeze everything alive now, after pytest's own collection at unconfigure, when the run
    had at least :data:`SURVIVORS_FROZEN_FROM` samples (see above): counted as the sample items a
    process collected, or as the records the reporting process kept (an xdist controller
    collects no item)."""
    if samples >= SURVIVORS_FROZEN_FROM:
        gc.freeze()
