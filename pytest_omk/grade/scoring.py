"""Scores of one sample, computed exactly as the format's owner computes them.

All scores are on the 1-5 scale and rounded half-up to two decimals at every stage, the way
JavaScript's ``Number(x.toFixed(2))`` rounds (on the exact binary value of the double). Sums run
left to right in plain floating point, as in JavaScript; ``math.fsum`` or Python 3.12's
compensated ``sum`` could differ in the last bit and flip a rounding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_omk.js.numbers import js_sum, round2

if TYPE_CHECKING:  # the models load only when a sample is scored (the plugin's start-up imports this)
    from pytest_omk.models import AssertionBase
    from pytest_omk.models.results import Reading

LAYERS = ("assertions", "fact", "behavior", "judge", "composite")
"""The five scores of a sample, in report order."""


def ratio_to_score(passed_weight: float, total_weight: float) -> float | None:
    """Map a passed-weight ratio to ``1 + 4·ratio``, rounded; ``None`` when nothing was weighed."""
    if total_weight <= 0:
        return None
    return round2(1 + 4 * (passed_weight / total_weight))


@dataclass(frozen=True)
class Scores:
    """A sample's scores; ``None`` means the score is absent (nothing observed for it)."""

    assertions: float | None
    """Flat score over every observed top-level assertion."""
    fact: float | None
    behavior: float | None
    judge: float | None
    composite: float | None
    """Mean of the present layers among fact, behavior and judge."""


def _weighted(pairs: Sequence[tuple[AssertionBase, Reading]]) -> float | None:
    observed = [(a.weight, r.status == "pass") for a, r in pairs if r.status != "missing"]
    return ratio_to_score(js_sum(w for w, ok in observed if ok), js_sum(w for w, _ in observed))


def score_sample(
    assertions: Sequence[AssertionBase], readings: Sequence[Reading], judge: float | None
) -> Scores:
    """Score a sample from its top-level assertions, their readings and its judge layer.

    Missing readings are left out of every weight. A mixed-layer ``assert-set`` counts in the flat
    score only; every other assertion also counts in its fact or behavior layer.
    """
    if len(assertions) != len(readings):
        raise ValueError(f"{len(assertions)} assertions but {len(readings)} readings")
    pairs = list(zip(assertions, readings, strict=True))
    from pytest_omk.models.assertions import assertion_layer

    fact = _weighted([(a, r) for a, r in pairs if assertion_layer(a) == "fact"])
    behavior = _weighted([(a, r) for a, r in pairs if assertion_layer(a) == "behavior"])
    present = [s for s in (fact, behavior, judge) if s is not None]
    composite = round2(js_sum(present) / len(present)) if present else None
    return Scores(_weighted(pairs), fact, behavior, judge, composite)


def judge_layer(scores: Mapping[str, float | None], weights: Mapping[str, float]) -> float | None:
    """The rubric's weighted score, summed in the rubric's key order; ``None`` unless all are scored."""
    if not weights:
        return None
    values = [scores.get(name) for name in weights]
    if any(value is None for value in values):
        return None
    return round2(
        js_sum(
            value * weights[name] for name, value in zip(weights, values, strict=True) if value is not None
        )
    )


def mean_score(readings: Iterable[Reading]) -> float | None:
    """Mean judge score over repeated readings that were observed; ``None`` when none was."""
    observed = [r.score for r in readings if r.status != "missing" and r.score is not None]
    return round2(js_sum(observed) / len(observed)) if observed else None


def scores_record(scores: Scores | None) -> dict[str, float | None]:
    """The five scores (``None`` when missing)."""
    if scores is None:
        return dict.fromkeys(LAYERS)
    return {layer: getattr(scores, layer) for layer in LAYERS}
