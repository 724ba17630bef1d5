"""The trend across runs: many reports' samples as compact per-run arrays, then states and slides.

Reports are read one at a time (:meth:`History.add_run`); of each only what the trend needs is kept:
per sample an id into one shared table of sample keys, its outcome as one byte and each layer's
score as a 16-bit integer (hundredths; reports round scores to 2 decimals), plus the run's layer
means. A thousand runs of a thousand samples take about 15 MB, whatever the reports' size.
:func:`pytest_omk.compare.history_trend.build_trend` orders the runs by ``startedAt`` and derives
everything else (:mod:`pytest_omk.compare.history_states` holds the rules).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from pytest_omk.compare.history_states import OUTCOME_MARKS, SKIP
from pytest_omk.errors import ConfigError
from pytest_omk.grade.stats import mean2
from pytest_omk.js.numbers import js_sum, round2
from pytest_omk.models.history import LAYERS, HistorySample, LayerPoint

SampleKey = tuple[str, str | None]
MISSING = -1
"""A layer score that is not there (scores are 1..5, kept as hundredths)."""
Z95 = 1.959964


@dataclass
class RunData:
    """One report, compacted."""

    path: str
    started: datetime
    started_text: str
    digest: str | None
    ids: array[int] = field(default_factory=lambda: array("i"))
    marks: bytearray = field(default_factory=bytearray)
    scores: dict[str, array[int]] = field(default_factory=dict)
    repeated_flaky: set[int] = field(default_factory=set)
    outcomes: dict[str, int] = field(default_factory=dict)
    layers: dict[str, LayerPoint] = field(default_factory=dict)

    def release(self) -> None:
        """Drop the per-sample arrays (the run's counts and layer means stay)."""
        self.ids, self.marks, self.scores = array("i"), bytearray(), {}

    def column(self, layer: str) -> dict[int, float]:
        """Sample id → this run's score of ``layer``, for the samples that have it."""
        return {i: s / 100 for i, s in zip(self.ids, self.scores[layer], strict=True) if s != MISSING}


@dataclass
class History:
    """The runs read so far, and the table of every sample key they hold."""

    runs: list[RunData] = field(default_factory=list)
    keys: dict[SampleKey, int] = field(default_factory=dict)

    def add_run(
        self, *, path: str, started: datetime, started_text: str, digest: str | None,
        samples: Iterable[HistorySample],
    ) -> None:  # fmt: skip
        """Keep what the trend needs of one report's (validated) samples."""
        run = RunData(path, started, started_text, digest)
        run.scores = {layer: array("h") for layer in LAYERS}
        seen: set[int] = set()
        outcomes: Counter[str] = Counter()
        for sample in samples:
            sid = self.keys.setdefault((sample.nodeid, sample.variant), len(self.keys))
            if sid in seen:
                where = f" (variant {sample.variant})" if sample.variant is not None else ""
                raise ConfigError(f"{path}: sample {sample.nodeid}{where} is listed twice")
            seen.add(sid)
            run.ids.append(sid)
            run.marks.append(OUTCOME_MARKS.get(sample.outcome or "unknown", SKIP))
            outcomes[sample.outcome or "unknown"] += 1
            for layer in LAYERS:
                value = getattr(sample.scores, layer)
                run.scores[layer].append(MISSING if value is None else round(value * 100))
            if sample.repeats is not None and 0 < sample.repeats.passRate < 1:
                run.repeated_flaky.add(sid)
        run.outcomes = dict(sorted(outcomes.items()))
        run.layers = {layer: layer_point(list(run.column(layer).values())) for layer in LAYERS}
        self.runs.append(run)


def layer_point(scores: list[float]) -> LayerPoint:
    """The mean of ``scores`` and its 95 % interval (mean ± 1.96 standard errors)."""
    mean = mean2(scores)
    if mean is None or len(scores) < 2:
        return LayerPoint(mean=mean, interval=None, samples=len(scores))
    exact = js_sum(scores) / len(scores)
    sd = math.sqrt(js_sum((s - exact) ** 2 for s in scores) / (len(scores) - 1))
    half = Z95 * sd / math.sqrt(len(scores))
    # Scores live in 1..5: so does the interval.
    low, high = round2(max(exact - half, 1.0)), round2(min(exact + half, 5.0))
    return LayerPoint(mean=mean, interval=[low, high], samples=len(scores))
