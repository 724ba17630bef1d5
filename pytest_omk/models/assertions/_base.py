"""What every assertion model shares: the scoring layers and the common base classes."""

from typing import ClassVar, Literal

from pydantic import Field

from pytest_omk.models._base import NonBlankList, NonNegativeNumber, PositiveWeight, StrictModel

Layer = Literal["fact", "behavior"]
MAX_ASSERTION_DEPTH = 16


class AssertionBase(StrictModel):
    """Keys every assertion accepts."""

    layer: ClassVar[Layer | None] = None
    is_async: ClassVar[bool] = False
    is_llm: ClassVar[bool] = False

    weight: PositiveWeight = 1.0
    """Weight in the assertion score (default 1). Ignored on ``assert-set`` children."""
    negate: bool = Field(default=False, alias="not")
    """Invert a valid pass/fail reading."""


# Private bases shared across families: text and agent (``values``), bounds and similarity (``value``).


class _TextValues(AssertionBase):
    values: NonBlankList
    """Non-empty list of non-blank strings."""


class _Bound(AssertionBase):
    value: NonNegativeNumber
    """The bound (a finite number >= 0)."""
