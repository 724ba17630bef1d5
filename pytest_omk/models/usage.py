"""The model calls of a sample, or of a run, by who made them: typed for the JSON report.

What :mod:`pytest_omk.models.accounting`'s ledger records call by call, summed per role: the model
under test apart from the judge. This is the report's one per-role usage block: the budget's
section keeps its caps and reads its spend here (``spent``). The per-sample record and the report's summary both carry a :class:`CallUsage`;
its part of ``schemas/report/v1/report.schema.json`` is generated from these models.
"""

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

Number = int | float
"""Kept as written: an ``int`` stays an ``int`` in the JSON report."""


class LiveSpend(BaseModel):
    """What the answered live calls of a role spent in this run: what a budget counts."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    costUSD: Number = Field(default=0, ge=0)
    """Cost of the priced live calls (the dollar cap's figure)."""
    pricedCalls: int = Field(default=0, ge=0)
    unpricedCalls: int = Field(default=0, ge=0)
    """Live calls with no known price: counted by their tokens only."""
    tokens: int = Field(default=0, ge=0)
    """Tokens of every answered live call, estimates included (the token cap's figure)."""
    unpricedTokens: int = Field(default=0, ge=0)
    estimatedCalls: int = Field(default=0, ge=0)
    """Live calls whose answer did not say what they used, counted by an estimate."""


class RoleUsage(BaseModel):
    """The model calls one role made (the model under test, or the judge) and what they used."""

    # As every record part: unknown keys ignored (older reports), validators built on first use.
    model_config = ConfigDict(extra="ignore", defer_build=True)
    OPTIONAL_KEYS: ClassVar[tuple[str, ...]] = ("spent", "notGraded")

    calls: int = Field(default=0, ge=0)
    live: int = Field(default=0, ge=0)
    """Calls that reached the model in this run (answered or failed)."""
    replayed: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)
    """Live calls that ended without an answer after their retries."""
    inputTokens: int | None = Field(default=None, ge=0)
    """Summed over the calls that reported them (``null``: none did)."""
    outputTokens: int | None = Field(default=None, ge=0)
    costUSD: Number | None = Field(default=None, ge=0)
    """Summed over the calls that reported a cost, replayed ones at their recorded cost (``null``: none did)."""
    costUnknown: int = Field(default=0, ge=0)
    """Answered calls whose executor reported no cost."""
    spent: LiveSpend | None = None
    """What the live calls spent now (present only when the role made live calls)."""
    notGraded: int = Field(default=0, ge=0)
    """Of ``calls``, those made for samples that never ran (a run cut short: ``-x``, ``--maxfail``,
    Ctrl-C): answered and paid, graded on no sample. Only in the summary, only when not 0."""

    @model_serializer(mode="wrap")
    def _leave_out_unset_spent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.spent is None:
            data.pop("spent", None)
        if not self.notGraded:
            data.pop("notGraded", None)
        return data


class CallUsage(BaseModel):
    """Model calls by who made them: the model under test apart from the judge."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    model: RoleUsage = Field(default_factory=RoleUsage)
    judge: RoleUsage = Field(default_factory=RoleUsage)
