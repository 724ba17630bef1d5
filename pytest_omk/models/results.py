"""What an executor returns (the upstream command protocol's shape) and what grading produces.

``ExecutionResult`` is deliberately lenient: it parses answers from user commands and Python
callables the way upstream does (missing numbers stay unknown), and it is also the format of a
recording, so a replayed call has exactly the shape of a live one, tool trace included.
"""

import math
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pytest_omk.models.tool_names import canonical_tool_name

ReadingStatus = Literal["pass", "fail", "missing"]
Cause = Literal[
    "no-judge",
    "judge-reply",
    "judge-input",
    "judge-error",
    "no-trace",
    "no-telemetry",
    "child-missing",
    "check-error",
]
"""Why a reading is missing, or an error: a code readers group and colour by, so that none of them
parses the human message. ``no-judge``: no judge configured; ``judge-reply``: the judge's replies were
unusable; ``judge-input``: nothing to judge against; ``judge-error``: the judge's call failed (the
sample is an ERROR); ``no-trace``/``no-telemetry``: the executor did
not report what the check reads; ``child-missing``: an ``assert-set`` child had no evidence;
``check-error``: the check itself failed (a crashed custom check, a schema that does not compile)."""
JUDGE_CAUSES: frozenset[Cause] = frozenset({"no-judge", "judge-reply", "judge-input", "judge-error"})
"""The causes of a missing judge reading (the terminal's "judge readings missing")."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class ToolCall(_Lenient):
    """One tool call in an agent trace, with a canonical tool name (``Bash``, ``Read`` ...).

    The name is canonicalized here, so every executor's trace (command, Python, HTTP, agent,
    a recording) compares the same way, as the reference's adapters normalize before recording.
    """

    tool: str
    input: Any = None
    output: Any = None
    success: bool = True
    status: Literal["success", "failure", "cancelled", "unknown"] | None = None

    @field_validator("tool")
    @classmethod
    def _canonical(cls, tool: str) -> str:
        return canonical_tool_name(tool)

    @property
    def effective_status(self) -> str:
        """``status`` when reported, else derived from ``success``."""
        return self.status or ("success" if self.success else "failure")


class Turn(_Lenient):
    """One conversation turn of an agent trace."""

    role: Literal["user", "assistant", "tool", "system"]
    content: str = ""
    toolCalls: list[ToolCall] | None = None
    durationMs: float | None = None


class MockStats(_Lenient):
    """How often the sample's mocks intercepted tool calls."""

    hits: int = 0
    misses: int = 0
    perMock: dict[str, int] = Field(default_factory=dict)


class AppCalls(_Lenient):
    """How many of an app's model calls were made live and how many replayed."""

    live: int = 0
    replayed: int = 0


class ResponseFormatRefusal(_Lenient):
    """A server refused the structured output a judge call asked for; the call went without it."""

    format: str
    """What was refused: ``json_object`` or ``json_schema``."""
    reason: str
    """The server's answer to it (``openai API error 400: ...``)."""


MAX_NUMBER = 10**12
"""Largest token count, turn count, cost or time believed from an executor or a recording."""


def shown_number(value: float) -> str:
    """A number for an error message: a 400-digit count shown by its start and length."""
    text = str(value)
    return text if len(text) <= 20 else f"{text[:20]}... ({len(text)} digits)"


class ExecutionResult(_Lenient):
    """The model's answer to one sample, with the telemetry the executor could report.

    ``None`` means "not reported": assertions needing it read as missing evidence, never as 0.
    """

    output: str = ""
    inputTokens: int | None = None
    outputTokens: int | None = None
    costUSD: float | None = None
    latencyMs: float | None = None
    """Wall-clock time of the call in milliseconds, measured by pytest-omk."""
    durationApiMs: float | None = None
    numTurns: int | None = None
    cacheReadTokens: int | None = None
    cacheCreationTokens: int | None = None
    fullNumTurns: int | None = None
    """Turns including sub-agents' (diagnostic; ``turns_*`` read ``numTurns``)."""
    numSubAgents: int | None = None
    stopReason: str | None = None
    toolCalls: list[ToolCall] | None = None
    """``None`` when the executor reports no trace (tool assertions then read as missing)."""
    turns: list[Turn] | None = None
    mockStats: MockStats | None = None
    endpoint: str | None = None
    """Where the answer came from: the API's URL without credentials or query (HTTP executors)."""
    servedModel: str | None = None
    """The model the server says answered, which may differ from the name asked for (a local
    server answers any name with the model it has loaded)."""
    responseFormatRefused: ResponseFormatRefusal | None = None
    """Set when the endpoint refused the ``response_format`` asked for and the call went without it."""
    replayed: bool = False
    """Whether this result came from a recording rather than a live call."""
    appCalls: AppCalls | None = None
    """An app's own model calls while it answered (an app under test runs live; its calls go
    through the recordings): ``None`` for any other executor. Never recorded."""
    retries: int = 0
    """How many retries the call needed."""
    previousOutput: str | None = None
    """The answer this live call's recording replaced, when it was a different one (record modes
    ``all`` and ``rewrite``): what a re-record review shows. Never recorded itself."""

    def invalid_number(self) -> tuple[str, float] | None:
        """The first count, cost or time that is negative, above :data:`MAX_NUMBER` or not finite,
        as ``(field, value)``; ``None`` when all are in range.

        A negative cost would make ``cost_max`` pass; ``NaN`` or a 400-digit count would break the
        totals at the end of the run.
        """
        numbers: list[tuple[str, float | None]] = [(name, getattr(self, name)) for name in _NUMBERS]
        numbers += [(f"turns[{i}].durationMs", turn.durationMs) for i, turn in enumerate(self.turns or [])]
        if self.mockStats is not None:
            numbers += [("mockStats.hits", self.mockStats.hits), ("mockStats.misses", self.mockStats.misses)]
            numbers += [(f"mockStats.perMock.{k}", v) for k, v in self.mockStats.perMock.items()]
        if self.appCalls is not None:
            numbers += [("appCalls.live", self.appCalls.live), ("appCalls.replayed", self.appCalls.replayed)]
        for name, value in numbers:
            # Range first: math.isfinite of a 400-digit int would overflow.
            if value is not None and (value < 0 or value > MAX_NUMBER or not math.isfinite(value)):
                return name, value
        return None

    def has_trace(self) -> bool:
        """Whether the executor reported a tool trace at all: ``toolCalls`` (the reference reads
        tool calls only there, never from ``turns``)."""
        return self.toolCalls is not None


_NUMBERS = (
    "inputTokens",
    "outputTokens",
    "costUSD",
    "latencyMs",
    "durationApiMs",
    "numTurns",
    "cacheReadTokens",
    "cacheCreationTokens",
    "fullNumTurns",
    "numSubAgents",
    "retries",
)


class Reading(BaseModel):
    """The verdict of one assertion or rubric dimension."""

    model_config = ConfigDict(frozen=True)

    status: ReadingStatus
    message: str = ""
    score: float | None = None
    """The judge's 1-5 score for judge-scored readings."""
    final: bool = False
    """An error reading (custom check crashed, timed out): ``not`` must not invert it."""
    cause: Cause | None = None
    """Set on missing and error readings only."""
    at: tuple[int, ...] = ()
    """An ``assert-set``'s reading: the index path of the child it is about (the first child that
    failed, had no evidence or could not be checked), so a report can point at that child's line."""
    replicates: tuple[float | None, ...] = ()
    """A rubric dimension judged several times (``--omk-judge-repeat``): each replicate's score
    (``None``: an unusable reply), in replicate order."""

    @classmethod
    def passed(cls, message: str = "", score: float | None = None) -> Self:
        """A passing reading."""
        return cls(status="pass", message=message, score=score)

    @classmethod
    def failed(cls, message: str, score: float | None = None) -> Self:
        """A failing reading."""
        return cls(status="fail", message=message, score=score)

    @classmethod
    def missing(cls, message: str, cause: Cause) -> Self:
        """Missing evidence: neither pass nor fail, with its cause."""
        return cls(status="missing", message=message, cause=cause)

    @classmethod
    def error(cls, message: str) -> Self:
        """A failure caused by the check itself; never inverted by ``not``."""
        return cls(status="fail", message=message, final=True, cause="check-error")
