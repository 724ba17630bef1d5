"""What one sample's outcomes across runs say (its state), and whether a layer is sliding.

The rules (documented in docs/history.md):

- A run's outcome of a sample is *pass* (passed, xpassed), *fail* (failed, error, xfailed), *skip*
  (skipped, unknown) or *absent* (not in that run's report). Only pass and fail count below; a
  skipped or absent run neither breaks nor starts a streak.
- **flaky**: it flips between pass and fail at least twice, or in some run its repeats passed at
  a rate strictly between 0 and 1. Flakiness wins over every other state.
- **failing**: it failed in every run it has an outcome in; **stable**: it passed in every one.
- One flip from pass to fail: **failing since run k** (the first run of the failing streak), or
  **newly failing** when that streak is only its last run.
- One flip from fail to pass: **fixed** (since the first run of the passing streak).
- **not run**: no pass and no fail in any run.
- **sliding** (per layer): the paired comparison of :mod:`pytest_omk.compare.bootstrap` (seeded
  percentile bootstrap) of each sample's mean over the last K runs against its mean over the K runs
  before them (fewer when the history is shorter) finds them ``worse``: the 95 % interval of the
  mean difference lies below 0, with at least 5 samples paired. A layer whose mean did not drop is
  not sliding, and is not bootstrapped.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_omk.compare.bootstrap import paired_comparison
from pytest_omk.js.numbers import js_sum, round2

ABSENT, PASS, FAIL, SKIP = 0, 1, 2, 3
"""A run's outcome of a sample, one byte each (:data:`MARKS` names them)."""
MARKS = ("absent", "pass", "fail", "skip")
OUTCOME_MARKS = {
    "passed": PASS,
    "xpassed": PASS,
    "failed": FAIL,
    "error": FAIL,
    "xfailed": FAIL,
    "skipped": SKIP,
    "unknown": SKIP,
}
STATE_ORDER = ("newly failing", "failing since", "flaky", "fixed", "failing", "not run", "stable")
"""The order samples are listed in: what needs a look first."""


@dataclass(frozen=True)
class SampleState:
    """A sample's state, the run its current streak began (1-based; flagged states only), its flips."""

    state: str
    since: int | None
    flips: int


def sample_state(marks: Sequence[int], *, repeated_flaky: bool = False) -> SampleState:
    """The state of a sample whose per-run outcomes (history order) are ``marks``."""
    graded = [(run, mark) for run, mark in enumerate(marks, start=1) if mark in (PASS, FAIL)]
    flips = sum(1 for (_, a), (_, b) in itertools.pairwise(graded) if a != b)
    if repeated_flaky or flips >= 2:
        return SampleState("flaky", None, flips)
    if not graded:
        return SampleState("not run", None, 0)
    if flips == 0:
        return SampleState("failing" if graded[0][1] == FAIL else "stable", None, 0)
    streak = next(i for i in range(len(graded) - 1, 0, -1) if graded[i - 1][1] != graded[i][1])
    since = graded[streak][0]
    if graded[-1][1] == PASS:
        return SampleState("fixed", since, 1)
    return SampleState("newly failing" if streak == len(graded) - 1 else "failing since", since, 1)


@dataclass(frozen=True)
class Windows:
    """The runs (1-based) of a sliding comparison: the last ``window`` and up to ``window`` before."""

    recent: list[int]
    previous: list[int]


def windows(runs: int, window: int) -> Windows | None:
    """The two windows over ``runs`` runs; ``None`` when there is no run before the last ``window``."""
    if runs <= window:
        return None
    start = runs - window + 1
    return Windows(list(range(start, runs + 1)), list(range(max(1, start - window), start)))


def window_means(columns: Sequence[Mapping[int, float]]) -> dict[int, float]:
    """Each sample's mean over the runs of one window (``columns``: per run, sample id → score)."""
    sums: dict[int, float] = {}
    counts: dict[int, int] = {}
    for column in columns:
        for sample, score in column.items():
            sums[sample] = sums.get(sample, 0.0) + score
            counts[sample] = counts.get(sample, 0) + 1
    return {sample: total / counts[sample] for sample, total in sums.items()}


@dataclass(frozen=True)
class Slide:
    """A layer's paired comparison of the two windows."""

    pairs: int
    mean_difference: float | None
    interval: tuple[float, float] | None
    sliding: bool


def slide(previous: Mapping[Any, float], recent: Mapping[Any, float]) -> Slide:
    """Whether ``recent`` (sample → mean) is below ``previous`` by more than the bootstrap allows.

    A layer whose mean did not drop is not sliding whatever the interval: its bootstrap (10,000
    resamples of every pair, the bulk of the trend's time for large sample sets) is skipped.
    """
    shared = [key for key in previous if key in recent]
    drop = js_sum(recent[key] - previous[key] for key in shared) / len(shared) if shared else 0.0
    if drop >= 0:
        return Slide(len(shared), round2(drop) if shared else None, None, False)
    result = paired_comparison(previous, recent)
    bounds = result["interval"]
    interval = (bounds["low"], bounds["high"]) if bounds else None
    return Slide(result["pairs"], result["meanDifference"], interval, result["verdict"] == "worse")
