"""The model calls of a sample, or of a run, by who made them: typed for the JSON report.

What :mod:`pytest_omk.models.accounting` counts call by call, summed per role: the model under test
apart from the judge. The per-sample record and the report's summary both carry a :class:`CallUsage`;
its part of ``schemas/report/v1/report.schema.json`` is generated from these models.
"""

from pydantic import BaseModel, ConfigDict, Field

Number = int | float
"""Kept as written: an ``int`` stays an ``int`` in the JSON report."""


class RoleUsage(BaseModel):
    """The model calls one role made (the model under test, or the judge) and what they used."""

    # As every record part: unknown keys ignored (older reports), validators built on first use.
    model_config = ConfigDict(extra="ignore", defer_build=True)

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


class CallUsage(BaseModel):
    """Model calls by who made them: the model under test apart from the judge."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    model: RoleUsage = Field(default_factory=RoleUsage)
    judge: RoleUsage = Field(default_factory=RoleUsage)
