"""Time limits derived from a baseline measured on this machine, in this run.

A loaded 2-core machine can make anything slow, so no test asserts a fixed wall-clock bound. A
limit that guards against a hang or an exponential blow-up is a floor or a multiple of a baseline
(the same kind of work, measured in the same process just before), whichever is larger: a real
blow-up exceeds any such multiple by orders of magnitude, while a busy machine slows the baseline
as much as the work under test.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

from tests.loader_inputs import VALID_DIR


def measure(work: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of ``repeat`` runs of ``work``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


@functools.cache
def loader_baseline() -> float:
    """Seconds to load every file of the valid corpus once (measured once per process)."""
    from pytest_omk.loading import load_file

    def load_all() -> None:
        for path in sorted(VALID_DIR.iterdir()):
            if path.suffix in (".json", ".yaml"):
                load_file(path)

    return measure(load_all)


def budget(floor: float, factor: float, baseline: float) -> float:
    """``floor`` seconds, or ``factor`` times the baseline when that is more."""
    return max(floor, factor * baseline)


def loader_budget(floor: float) -> float:
    """A time limit for loading one hostile input: generous against the loader's own baseline."""
    return budget(floor, 200, loader_baseline())
