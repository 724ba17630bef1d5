"""Assertions comparing the output with a reference text: ROUGE-N, BLEU-4 and edit distance."""

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from pytest_omk.models._base import FiniteNumber, NonBlankStr, PositiveInteger
from pytest_omk.models.assertions._base import AssertionBase, Layer, _Bound


class RougeNMin(AssertionBase):
    """ROUGE-N recall against ``reference`` >= threshold."""

    type: Literal["rouge_n_min"]
    layer: ClassVar[Layer | None] = "fact"
    reference: NonBlankStr
    """The gold text."""
    n: PositiveInteger = 1
    """n-gram order (default 1)."""
    threshold: Annotated[FiniteNumber, Field(ge=0, le=1)] = 0.5
    """Pass when recall >= threshold, in [0, 1] (default 0.5)."""


class BleuMin(AssertionBase):
    """Unsmoothed BLEU-4 against ``reference`` >= threshold."""

    type: Literal["bleu_min"]
    layer: ClassVar[Layer | None] = "fact"
    reference: NonBlankStr
    """The gold text."""
    threshold: Annotated[FiniteNumber, Field(ge=0, le=1)] = 0.5
    """Pass when BLEU >= threshold, in [0, 1] (default 0.5)."""


class LevenshteinMax(_Bound):
    """Edit distance (UTF-16 code units) between output and ``reference`` <= value."""

    type: Literal["levenshtein_max"]
    layer: ClassVar[Layer | None] = "fact"
    reference: NonBlankStr
    """The text the output should be close to."""
