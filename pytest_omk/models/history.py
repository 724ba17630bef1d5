"""The trend across runs (``python -m pytest_omk render --history``), typed: what it reads and writes.

:class:`HistorySample` is the part of a report's sample record the trend reads (validated strictly:
a report handed to ``render`` is hostile input); :class:`TrendDocument` is the ``--json`` output,
whose JSON Schema ships at ``schemas/trend/v1/trend.schema.json`` (generated from these models by
``python -m pytest_omk.models.schema_export``).
"""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from pytest_omk.models.report import Number, Outcome

TREND_SCHEMA_VERSION: Literal["pytest-omk.trend/v1"] = "pytest-omk.trend/v1"
LAYERS = ("composite", "fact", "behavior", "judge", "assertions")
"""The layers followed across runs, in the order every output shows them."""

State = Literal["newly failing", "failing since", "fixed", "flaky", "failing", "stable", "not run"]
Mark = Literal["pass", "fail", "skip", "absent"]
"""One run's outcome of a sample: passed (or xpassed); failed, error or xfailed; skipped or
unknown; not in that run's report."""
Interval = Annotated[list[Number], Field(min_length=2, max_length=2)]


class _Read(BaseModel):
    """A part of a report the trend reads: other keys are ignored (they are not used)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


Score = Annotated[float | None, Field(ge=1, le=5)]
"""As the record's :data:`pytest_omk.models.report.Score`, as a float: validated without Python
callbacks (a union with ``int`` made pydantic check the bounds in Python, a third of reading a report)."""


class TrendScores(_Read):
    """The five layer scores of a sample record (``null``: not scored)."""

    assertions: Score = None
    fact: Score = None
    behavior: Score = None
    judge: Score = None
    composite: Score = None


class RepeatRate(_Read):
    """The only part of a repeated sample's ``repeats`` the trend needs."""

    passRate: Number = Field(ge=0, le=1)


class HistorySample(_Read):
    """A report's sample record, as far as the trend reads it."""

    nodeid: str = Field(min_length=1)
    variant: str | None = None
    outcome: Outcome | None = None
    scores: TrendScores = Field(default_factory=TrendScores)
    repeats: RepeatRate | None = None


class _Out(BaseModel):
    """A part of the trend document: closed."""

    model_config = ConfigDict(extra="forbid")


class LayerPoint(_Out):
    """One layer in one run: the mean over the run's samples that have it, with its 95 % interval."""

    mean: Number | None
    interval: Interval | None
    """mean ± 1.96 standard errors (sample SD over √n), 2 decimals; ``null`` below two samples."""
    samples: int = Field(ge=0)


class TrendRun(_Out):
    """One report, in the order of the history (by ``startedAt``)."""

    index: int = Field(ge=1)
    """1-based position in the history (run 1 is the earliest)."""
    path: str
    """The report file as it was given."""
    startedAt: str
    sampleSet: int = Field(ge=1)
    """Which sample set the run ran (see ``sampleSets``)."""
    samples: int = Field(ge=0)
    outcomes: dict[str, int]
    layers: dict[str, LayerPoint]


class SampleSet(_Out):
    """Runs that share one ``collection`` digest; a new set starts where the digest changes."""

    index: int = Field(ge=1)
    digest: str | None
    """The reports' ``collection.digest`` (``null``: written by a pytest-omk that had none)."""
    runs: list[int]
    added: list[str]
    """Samples this set has and the previous set had not (empty for the first set)."""
    removed: list[str]
    """Samples the previous set had and this one has not."""


class SampleTrend(_Out):
    """One sample (node id and variant) across the runs."""

    nodeid: str
    variant: str | None
    state: State
    since: int | None
    """For ``failing since``, ``newly failing`` and ``fixed``: the run the current streak began."""
    flips: int = Field(ge=0)
    """Changes between pass and fail over the runs it has an outcome in."""
    outcomes: list[Mark]
    """Per run, in history order."""
    composite: list[Number | None]
    """The composite per run (``null``: absent or not scored)."""
    repeatedFlaky: bool
    """In some run its repeats passed at a rate strictly between 0 and 1."""
    firstRun: int | None
    """The first run whose report holds it (``null``: none does)."""
    lastRun: int | None
    """The last run whose report holds it."""


class Sliding(_Out):
    """A layer's last ``window`` runs against the ``window`` runs before them, paired by sample."""

    layer: str
    recentRuns: list[int]
    previousRuns: list[int]
    pairs: int = Field(ge=0)
    """Samples with the layer in both windows (each sample's mean over a window is one value)."""
    meanDifference: Number | None
    """recent − previous, mean over the pairs."""
    interval: Interval | None
    """95 % paired bootstrap interval of that difference (seeded); ``null`` below 5 pairs, or when the
    mean did not drop (then it is not sliding, and not bootstrapped)."""
    sliding: bool
    """The interval lies wholly below 0."""
    acrossSampleSets: bool
    """The two windows hold runs of more than one sample set (only the shared samples are paired)."""


class TrendDocument(_Out):
    """``python -m pytest_omk render --history ... --json PATH``."""

    schemaVersion: Literal["pytest-omk.trend/v1"]
    window: int = Field(ge=1)
    runs: list[TrendRun]
    sampleSets: list[SampleSet]
    samples: list[SampleTrend]
    """Flagged samples first (by state), then the stable ones, each group by node id."""
    sliding: list[Sliding]
    """One entry per layer that has samples in both windows, in layer order; none until there are
    more runs than the window."""
