"""When ``--omk-repeat auto`` stops repeating a sample: a predictive stopping rule.

The fixed rule of ``--omk-repeat N`` passes a sample when at least ``need`` of its ``N`` runs pass
(``passed / N >= --omk-min-pass-rate``). ``auto`` runs the same repeat indices in order and stops
as soon as the runs still to come up to ``N`` are unlikely to change that decision: with a
Jeffreys prior Beta(½, ½) on the sample's pass probability, the predictive (beta-binomial)
probability that the remaining runs bring the passes to ``need`` is computed after every run; the
sample stops as passed when that probability is at least ``1 - risk`` (and the runs so far meet the
pass rate), as failed when it is at most ``risk`` (and they do not). When the decision is already
certain (no outcome of the remaining runs could change it) the probability is exactly 1 or 0, so
the rule contains curtailment. At ``N`` runs the fixed rule decides.

This is stochastic curtailment (the predictive-probability form of the sequential tests used to
stop clinical trials early); the reasons it was chosen over Wald's SPRT and over confidence
intervals are in docs/comparisons.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Decision = Literal["pass", "fail"]

PRIOR = 0.5
"""Jeffreys prior Beta(½, ½): most mass near 0 and 1, as most eval samples are stable."""
RISK = 0.05
"""Largest predictive probability that the remaining runs would change an early decision."""
_EPSILON = 1e-9


@dataclass(frozen=True)
class StopRule:
    """The stopping rule of one run: the maximum number of runs and the pass rate to meet."""

    maximum: int
    min_pass_rate: float
    risk: float = RISK

    def __post_init__(self) -> None:
        if self.maximum < 1:
            raise ValueError("the maximum number of runs must be at least 1")
        if not 0.0 <= self.min_pass_rate <= 1.0:
            raise ValueError("the minimum pass rate must be between 0 and 1")

    @property
    def need(self) -> int:
        """Passes needed among ``maximum`` runs (the fixed rule: ``passed / maximum >= rate``)."""
        return next(k for k in range(self.maximum + 1) if k / self.maximum >= self.min_pass_rate - _EPSILON)

    def decide(self, passed: int, runs: int) -> Decision | None:
        """The decision after ``runs`` runs of which ``passed`` passed, or ``None`` to go on."""
        if not 0 <= passed <= runs <= self.maximum:
            raise ValueError(f"{passed} passed of {runs} runs does not fit a maximum of {self.maximum}")
        meets = runs > 0 and passed / runs >= self.min_pass_rate - _EPSILON
        if runs == self.maximum:
            return "pass" if meets else "fail"
        if runs == 0:
            return None
        chance = pass_chance(passed, runs, self.maximum, self.need)
        if chance >= 1.0 - self.risk and meets:
            return "pass"
        if chance <= self.risk and not meets:
            return "fail"
        return None

    def next_wave(self, passed: int, runs: int) -> int:
        """How many more runs to start at once: the fewest after which a decision is possible.

        Whatever those runs answer, no decision can come before the last of them (the chance of
        passing rises with every pass), so starting them together makes exactly the calls that
        starting them one by one would make, in fewer round trips.
        """
        left = self.maximum - runs
        for extra in range(1, left + 1):
            if (
                self.decide(passed + extra, runs + extra) is not None
                or self.decide(passed, runs + extra) is not None
            ):
                return extra
        return max(1, left)


def pass_chance(passed: int, runs: int, maximum: int, need: int) -> float:
    """Predictive probability that ``maximum - runs`` more runs bring the passes to ``need``."""
    return _pass_chance(passed, runs, maximum, need)


@lru_cache(maxsize=4096)
def _pass_chance(passed: int, runs: int, maximum: int, need: int) -> float:
    left = maximum - runs
    short = need - passed
    if short <= 0:
        return 1.0
    if short > left:
        return 0.0
    a, b = PRIOR + passed, PRIOR + runs - passed
    total = 0.0
    for more in range(short, left + 1):
        total += math.exp(_log_choose(left, more) + _log_beta(a + more, b + left - more) - _log_beta(a, b))
    return min(1.0, total)


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
