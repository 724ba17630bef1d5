"""The JSON report's run-wide sections, typed: ``config`` and ``summary``.

Like the per-sample record (:mod:`pytest_omk.models.report`), these models both shape what the
report writes and generate their part of ``schemas/report/v1/report.schema.json``. Their field
order is the order the report has always written its keys in.
"""

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from pytest_omk.models.report import (
    FormatRefused,
    ModelCalls,
    Number,
    Outcome,
    Score,
    _Record,
    _WithOptionalKeys,
)
from pytest_omk.models.usage import CallUsage

RecordMode = Literal["new_episodes", "none", "once", "all", "rewrite", "off"]
"""Every mode of ``recordings.modes.RECORD_MODES`` (a report of a ``once`` or ``rewrite`` run was
refused here, which ended such a run with an internal error when it wrote a report)."""


class ReportConfig(_WithOptionalKeys):
    """Options that shaped the run. Never contains API keys or other secrets."""

    # Every key is written by this version; all are optional so that a merge of older shards'
    # reports (whose config is copied as it was) still validates and is written unchanged.
    OPTIONAL_KEYS: ClassVar[tuple[str, ...]] = (
        "executor", "executorSource", "executorNote", "model", "judge", "judgeModel", "rubricThreshold", "minComposite", "strict",
        "recordMode", "concurrency", "retries", "timeout", "variants", "repeat", "minPassRate",
        "baseline", "failOnRegression", "judgeTemplates", "shard", "repeatAuto", "changed", "budgetUSD",
        "budgetTokens", "mutate", "judgeResponseFormat", "maxTokens", "prices", "shardBy",
    )  # fmt: skip

    executor: str | None = None
    """The executor that answered (its id: ``openai``, ``python:myapp.adapter:answer`` ...)."""
    executorSource: Literal["command line", "ini", "hook", "fixture"] | None = None
    """Where it came from: ``--omk-executor``, ``omk_executor``, the ``pytest_omk_make_executor`` hook
    or the ``omk_app`` fixture."""
    executorNote: str | None = None
    """What was configured besides and not used (the hook when the command line names another)."""
    model: str | None = None
    judge: str | None = None
    judgeModel: str | None = None
    rubricThreshold: Number = 0
    minComposite: Number | None = None
    strict: bool = False
    recordMode: RecordMode = "off"
    concurrency: int = Field(default=1, ge=1)
    retries: int = Field(default=0, ge=0)
    timeout: Number = Field(default=1, gt=0)
    variants: dict[str, str] = Field(default_factory=dict)
    repeat: int = Field(default=1, ge=1)
    minPassRate: Number = Field(default=1, ge=0, le=1)
    baseline: str | None = None
    failOnRegression: Number | None = Field(default=None, ge=0)
    judgeTemplates: dict[str, str] = Field(default_factory=dict)
    """Judge template ids (version#hash) by kind."""
    shard: Annotated[str | None, Field(pattern=r"^[0-9]+/[0-9]+$")] = None
    """--omk-shard K/N: this run was the K-th of N shards (null: the whole run, or a merge of shards)."""
    repeatAuto: bool = False
    """--omk-repeat auto (``repeat`` is then the maximum)."""
    changed: bool = False
    budgetUSD: Number | None = Field(default=None, ge=0)
    budgetTokens: int | None = Field(default=None, ge=1)
    mutate: bool = False
    judgeResponseFormat: Literal["json_object", "json_schema", "none"] = "json_object"
    """--omk-judge-response-format: the structured output the judge asked for."""
    maxTokens: int | None = Field(default=None, ge=1)
    """--omk-max-tokens: the most tokens of each answer (null: not sent)."""
    prices: dict[str, list[Number]] = Field(default_factory=dict)
    """ini omk_prices: USD per million tokens by model (input, output, and cached input when given)."""
    shardBy: Literal["count", "durations"] = "count"
    """--omk-shard-by: blocks of equal item counts or of equal recorded latency (every shard of one
    run cut the same way; merge refuses a mix)."""


class SummaryMeans(_Record):
    """Each layer's mean over the samples that have a score for it (the terminal's column order)."""

    assertions: Score = None
    composite: Score = None
    fact: Score = None
    behavior: Score = None
    judge: Score = None


class BudgetSummary(_Record):
    """``--omk-budget-usd`` / ``--omk-budget-tokens``: the caps, what was spent, what did not run.

    The spend by role (priced and unpriced calls, tokens, estimates) is in the summary's ``usage``
    block (``usage.<role>.spent``); ``spentUSD`` and ``tokens`` are its totals, compared to the caps.
    """

    limitUSD: Number | None = Field(default=None, ge=0)
    limitTokens: int | None = Field(default=None, ge=1)
    spentUSD: Number = Field(ge=0)
    """Cost of the priced live calls (model under test and judge): ``usage.*.spent.costUSD`` summed."""
    tokens: int = Field(ge=0)
    """Tokens of the live calls: ``usage.*.spent.tokens`` summed."""
    refusedCalls: int = Field(ge=0)
    notRun: int = Field(ge=0)
    """Samples skipped because the budget was spent."""


class RepeatSummary(_Record):
    """``--omk-repeat auto``: runs made against the most the samples could have taken."""

    runs: int = Field(ge=0)
    maximum: int = Field(ge=0)
    saved: int = Field(ge=0)


class MutationSummary(_Record):
    """``--omk-mutate``: samples assessed and the weak ones (checks that caught no mutant)."""

    assessed: int = Field(ge=0)
    mutants: int = Field(ge=0)
    caught: int = Field(ge=0)
    weak: list[str] = Field(default_factory=list)
    """Node ids of the weak samples."""


class ReportSummary(_WithOptionalKeys):
    """Run totals: outcome counts, layer means, model calls, cost, missing judge readings."""

    OPTIONAL_KEYS: ClassVar[tuple[str, ...]] = (
        "judgeMissingReasons",
        "budget",
        "repeats",
        "mutation",
        "carried",
        "cutOff",
        "judgeFormatRefused",
        "judgeSameModel",
        "skipReasons",
        "judgeRecordingsIgnored",
    )

    samples: int = Field(ge=0)
    outcomes: dict[Outcome, Annotated[int, Field(ge=0)]]
    means: SummaryMeans
    modelCalls: ModelCalls
    """Every model call of the run, the judge's and those of samples that ended in an error too."""
    usage: CallUsage = Field(default_factory=CallUsage)
    """The same calls by who made them: the model under test apart from the judge."""
    costUSD: Number | None = Field(ge=0)
    """What the run's calls cost, the judge's included (``usage`` has each role's part)."""
    judgeReadingsMissing: int = Field(ge=0)
    judgeMissingReasons: dict[str, Annotated[int, Field(ge=1)]] = Field(default_factory=dict)
    """Why judge readings were not scored, with counts."""
    budget: BudgetSummary | None = None
    repeats: RepeatSummary | None = None
    mutation: MutationSummary | None = None
    carried: int = Field(default=0, ge=0)
    """Samples reported from the baseline (``--omk-changed``), not run."""
    cutOff: int = Field(default=0, ge=0)
    """Answers cut short: the model stopped at the token limit or the context window
    (``stopReason`` ``length``, ``max_tokens`` or ``model_context_window_exceeded``)."""
    judgeFormatRefused: dict[str, FormatRefused] = Field(default_factory=dict)
    """Judge endpoints that refused the structured output asked for, by endpoint: the judge asked
    again without it and went on without it for the rest of the run."""
    judgeSameModel: list[str] = Field(default_factory=list)
    """Where the judge was the model under test (``'<model>' at <server>``): one model grading its
    own answers."""
    skipReasons: dict[str, Annotated[int, Field(ge=1)]] = Field(default_factory=dict)
    """Why samples were skipped before any call, with counts."""
    judgeRecordingsIgnored: int = Field(default=0, ge=0)
    """Samples whose recordings hold judge readings that no configured judge read."""
