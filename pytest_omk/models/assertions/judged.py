"""The asynchronous assertions: judge-scored (an LLM gives a 1-5 score) and custom checks."""

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from pytest_omk.models._base import FiniteNumber, NonBlankStr
from pytest_omk.models.assertions._base import AssertionBase, Layer

JudgeThreshold = Annotated[FiniteNumber, Field(ge=1, le=5)]


class _Judged(AssertionBase):
    is_async: ClassVar[bool] = True
    is_llm: ClassVar[bool] = True
    layer: ClassVar[Layer | None] = "fact"
    threshold: JudgeThreshold = 3.0
    """Pass when the judge's 1-5 score >= threshold (default 3)."""


class SemanticSimilarity(_Judged):
    """Judge-scored semantic similarity to ``reference``."""

    type: Literal["semantic_similarity"]
    reference: NonBlankStr
    """The text whose meaning the output should match."""


class Faithfulness(_Judged):
    """Judge-scored grounding in ``reference`` (else the sample's ``context``)."""

    type: Literal["faithfulness"]
    reference: str | None = None
    """Grounding text; when blank or absent the sample's ``context`` is used (one must be non-blank)."""


class AnswerRelevancy(_Judged):
    """Judge-scored relevance of the output to the sample's prompt."""

    type: Literal["answer_relevancy"]


class ContextRecall(_Judged):
    """Judge-scored coverage of the gold facts in ``reference`` (else the sample's ``context``)."""

    type: Literal["context_recall"]
    reference: str | None = None
    """The gold facts; when blank or absent the sample's ``context`` is used (one must be non-blank)."""


class Custom(AssertionBase):
    """A user check: a ``.py`` file with ``check(output, context)`` or a JS module (Node)."""

    type: Literal["custom"]
    layer: ClassVar[Layer | None] = "behavior"
    is_async: ClassVar[bool] = True
    fn: NonBlankStr
    """Path to the check module, relative to the sample file's directory."""
