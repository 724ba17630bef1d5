"""The per-sample record, typed: what one eval item reports to JUnit, the terminal and the JSON report.

A record travels from an xdist worker to the controller as plain JSON (an attribute of pytest's
report), so the wire form is :meth:`SampleRecord.wire` and every reader turns it back into the
model with :meth:`SampleRecord.of`. The ``samples`` of the JSON report and the ``sample`` part of
``schemas/report/v1/report.schema.json`` are both generated from these models.

Some keys are written only when they were given (a repeated sample's ``runs`` tallies, the
executor's optional token counts): each model lists them in its ``OPTIONAL_KEYS``, and its
serializer leaves them out when they were never set, so that ``null`` and "absent" stay distinct.
"""

from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from pytest_omk.models.results import Cause
from pytest_omk.models.usage import CallUsage

Number = int | float
"""Kept as written: an ``int`` stays an ``int`` (``1``, not ``1.0``) in the JSON report."""
Score = Annotated[Number | None, Field(ge=1, le=5)]
Status = Literal["pass", "fail", "missing"]
Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed", "unknown"]


class _Record(BaseModel):
    """A record part: unknown keys are ignored (older reports)."""

    # Field docstrings: see pytest_omk.models.field_docs. Validators are built on first use, not when
    # the module is imported: a live run imports this as its first item is set up, while the
    # first wave of calls is being sent, and first validates a record only once an answer is in.
    model_config = ConfigDict(extra="ignore", defer_build=True)
    OPTIONAL_KEYS: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Only _WithOptionalKeys's serializer leaves keys out: a part listing any must be one.
        if cls.OPTIONAL_KEYS and not issubclass(cls, _WithOptionalKeys):
            raise TypeError(f"{cls.__name__} lists OPTIONAL_KEYS: derive it from _WithOptionalKeys")


class _WithOptionalKeys(_Record):
    """A record part whose ``OPTIONAL_KEYS`` stay absent when they were never set.

    Apart from :class:`_Record` because the serializer is a Python call for every dump of every
    part (tens of thousands per replay): parts without optional keys do without it.
    """

    @model_serializer(mode="wrap")
    def _leave_out_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in self.OPTIONAL_KEYS:
            if key not in self.model_fields_set:
                data.pop(key, None)
        return data


class LayerScores(_Record):
    """The five scores of a sample (``None``: not scored), in report order."""

    assertions: Score = None
    fact: Score = None
    behavior: Score = None
    judge: Score = None
    composite: Score = None


class RunTally(_Record):
    """How a check read across the runs of a repeated sample."""

    pass_: int = Field(default=0, ge=0, alias="pass")
    fail: int = Field(default=0, ge=0)
    missing: int = Field(default=0, ge=0)

    model_config = ConfigDict(extra="ignore", populate_by_name=True, serialize_by_alias=True)


class AssertionEntry(_WithOptionalKeys):
    """One top-level assertion's reading."""

    OPTIONAL_KEYS = ("runs", "cause", "line")

    index: int = Field(ge=0)
    type: str
    layer: Literal["fact", "behavior"] | None
    weight: Number = Field(gt=0)
    status: Status
    message: str
    runs: RunTally | None = None
    cause: Cause | None = None
    """Why the reading is missing or an error (written only then)."""
    line: int | None = Field(default=None, ge=1)
    """The assertion's 1-based line in its sample file (an ``assert-set``'s: the child its reading is
    about); written when a check of the sample did not pass."""


class RubricEntry(_WithOptionalKeys):
    """One rubric dimension's reading (with its spread over the runs of a repeated sample)."""

    OPTIONAL_KEYS = ("readings", "sd", "runs", "cause", "line", "judgeReadings")

    score: Score
    weight: Number = Field(gt=0, le=1)
    reason: str
    status: Status
    readings: list[Number | None] | None = None
    sd: Number | None = None
    runs: RunTally | None = None
    cause: Cause | None = None
    """Why the dimension was not scored (written only then)."""
    line: int | None = Field(default=None, ge=1)
    """The dimension's 1-based line in its sample file (its key's); written when a check of the
    sample did not pass."""
    judgeReadings: list[Number | None] | None = None
    """Each judge replicate's score under ``--omk-judge-repeat`` > 1 (``None``: an unusable reply),
    in replicate order; written only then."""


class ExecutionRecord(_WithOptionalKeys):
    """What the executor reported (the first run's, for a repeated sample)."""

    OPTIONAL_KEYS = (
        "cacheReadTokens",
        "cacheCreationTokens",
        "fullNumTurns",
        "numSubAgents",
        "previousOutput",
        "stopReason",
        "endpoint",
    )

    output: str
    costUSD: Number | None = Field(default=None, ge=0)
    latencyMs: Number | None = Field(default=None, ge=0)
    inputTokens: int | None = Field(default=None, ge=0)
    outputTokens: int | None = Field(default=None, ge=0)
    numTurns: int | None = Field(default=None, ge=0)
    cacheReadTokens: int | None = Field(default=None, ge=0)
    cacheCreationTokens: int | None = Field(default=None, ge=0)
    fullNumTurns: int | None = Field(default=None, ge=0)
    numSubAgents: int | None = Field(default=None, ge=0)
    previousOutput: str | None = None
    """The answer a re-recording replaced (record modes ``all``, ``rewrite``): written only when
    this run's live answer differs from it."""
    toolCalls: list[dict[str, Any]] | None = None
    replayed: bool = False
    retries: int = Field(default=0, ge=0)
    stopReason: str | None = None
    """Why the answer ended, as the executor said it (``stop``, ``length``, ``end_turn``,
    ``max_tokens`` ...); ``length`` and ``max_tokens`` mean it was cut short."""
    endpoint: str | None = None
    """The API the answer came from (HTTP executors), without credentials or query."""


class FormatRefused(_Record):
    """A structured output a judge endpoint refused (the judge went on without it)."""

    format: Literal["json_object", "json_schema"]
    reason: str
    """The server's answer to it."""


class ModelCalls(_Record):
    """Live and replayed model calls (executor and judge)."""

    live: int = Field(default=0, ge=0)
    replayed: int = Field(default=0, ge=0)


class LayerStats(_Record):
    """A layer's mean and sample standard deviation over the runs."""

    mean: Score = None
    sd: Number | None = Field(default=None, ge=0)


class AutoRepeats(_Record):
    """``--omk-repeat auto``: how the sample's repeats stopped."""

    max: int = Field(ge=1)
    """The most runs the sample could have taken (``--omk-repeat-max``)."""
    saved: int = Field(ge=0)
    """Runs not made against that maximum."""
    decided: Literal["pass", "fail", "max"]
    """``pass``/``fail``: stopped early with that decision; ``max``: ran to the maximum."""


class Repeats(_WithOptionalKeys):
    """Present when the sample ran ``--omk-repeat N`` > 1 times, or ``--omk-repeat auto``."""

    OPTIONAL_KEYS = ("runs", "costUSD", "auto")

    n: int = Field(ge=1)
    passed: int = Field(ge=0)
    passRate: Number = Field(ge=0, le=1)
    passAll: bool
    assertions: LayerStats
    fact: LayerStats
    behavior: LayerStats
    judge: LayerStats
    composite: LayerStats
    runs: list[dict[str, Any]] | None = None
    costUSD: Number | None = Field(default=None, ge=0)
    auto: AutoRepeats | None = None


class MutantResult(_Record):
    """One mutant of the sample's output (``--omk-mutate``)."""

    operator: str
    applied: bool
    """``False``: the operator had nothing to change in this output (not counted)."""
    caught: bool
    """A deterministic check failed on the mutant."""
    failed: list[int] = Field(default_factory=list)
    """Indexes of the top-level assertions that failed on it."""


class Mutation(_Record):
    """``--omk-mutate``: how many wrong answers the sample's deterministic checks catch."""

    assessed: bool
    """``False`` when the real output already fails its checks (nothing to compare with)."""
    mutants: int = Field(ge=0)
    caught: int = Field(ge=0)
    weak: bool
    """Assessed, and no mutant caught: the checks would pass a bad answer."""
    results: list[MutantResult] = Field(default_factory=list)


class SampleRecord(_WithOptionalKeys):
    """One eval item's record, from setup (before anything ran) to the report."""

    OPTIONAL_KEYS = ("judgeFormatRefused", "judgeSameModel", "knownFailure", "judgeProbe")

    nodeid: str
    file: str
    sample_id: str = Field(min_length=1)
    line: int | None = Field(default=None, ge=1)
    """The sample's 1-based line in its file (its ``sample_id`` key's), as the test item reports it."""
    prompt: str | None = None
    variant: str | None = None
    outcome: Outcome | None = None
    executor: str | None = None
    model: str | None = None
    scores: LayerScores = Field(default_factory=LayerScores)
    assertions: list[AssertionEntry] = Field(default_factory=list)
    rubric: dict[str, RubricEntry] = Field(default_factory=dict)
    execution: ExecutionRecord | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    modelCalls: ModelCalls = Field(default_factory=ModelCalls)
    usage: CallUsage = Field(default_factory=CallUsage)
    """Every model call made for the sample (an errored one's too), the judge's apart."""
    urls: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None
    """Why the sample could not be run (executor, URL or judge failure); ``None`` when it ran."""
    judgeRecordingsIgnored: bool = False
    """No judge was configured, but the recordings hold judge readings of this sample."""
    repeats: Repeats | None = None
    skipReason: str | None = None
    """Why the sample was skipped: before any call (no executor, unmet ``requires``, the budget:
    ``omk budget: ...``), or because none of its checks could be graded; ``None`` otherwise."""
    inputDigest: str | None = None
    """SHA-256 of everything the result depends on (``--omk-changed``); ``None`` when not computed."""
    carried: bool = False
    """Reported from ``--omk-baseline`` (``--omk-changed``: its inputs did not change), not run."""
    mutation: Mutation | None = None
    judgeFormatRefused: dict[str, FormatRefused] = Field(default_factory=dict)
    """Judge endpoints that refused the structured output asked for, by endpoint (written only then)."""
    judgeSameModel: str | None = None
    """``'<model>' at <server>`` when the judge answered from the model under test (written only then)."""
    knownFailure: str | None = None
    """``--omk-known-failures=xfail``: why the sample failed in the baseline (written only then): it
    is expected to fail again (``xfailed``; ``xpassed`` when it passes now)."""
    judgeProbe: dict[str, Number] = Field(default_factory=dict)
    """``--omk-judge-probe length``: per rubric dimension, the score of the output with neutral filler
    appended minus the output's score (written only then)."""
    order: int = Field(default=0, exclude=True)
    """Where the item was collected (the report lists records in that order); not reported."""

    @classmethod
    def of(cls, wire: dict[str, Any]) -> Self:
        """The record a worker sent (or a report holds)."""
        return cls.model_validate(wire)

    def wire(self) -> dict[str, Any]:
        """The JSON-safe form that rides on pytest's report (``order`` included)."""
        return {**self.model_dump(mode="json"), "order": self.order}

    def reported(self) -> dict[str, Any]:
        """The record as the JSON report's ``samples`` lists it."""
        return self.model_dump(mode="json")
