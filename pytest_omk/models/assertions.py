"""One strict model per assertion type, joined in a discriminated union on ``type``.

Each class declares exactly the keys its type uses (``extra="forbid"`` rejects the rest), its
scoring layer (``fact`` / ``behavior``; an ``assert-set`` derives its layer from its leaves) and
whether it needs an asynchronous evaluator (the judge or a custom module), which may not be nested
inside an ``assert-set``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from pytest_omk.jsregex import VALID_FLAGS, JsRegexError, compile_js_regex
from pytest_omk.models._base import (
    FiniteNumber,
    LocatedValueError,
    NonBlankList,
    NonBlankStr,
    NonNegativeNumber,
    PositiveInteger,
    PositiveWeight,
    StrictModel,
)

Layer = Literal["fact", "behavior"]
MAX_ASSERTION_DEPTH = 16
# ASCII digits and a true end of string: Python's \d and $ would also take "Read:1\n" or Arabic digits.
_TOOL_REF = re.compile(r"[^:]+:[1-9][0-9]*")


class AssertionBase(StrictModel):
    """Keys every assertion accepts."""

    layer: ClassVar[Layer | None] = None
    is_async: ClassVar[bool] = False
    is_llm: ClassVar[bool] = False

    weight: PositiveWeight = 1.0
    """Weight in the assertion score (default 1). Ignored on ``assert-set`` children."""
    negate: bool = Field(default=False, alias="not")
    """Invert a valid pass/fail reading."""


# --- text -----------------------------------------------------------------------------------------


class _TextValue(AssertionBase):
    value: NonBlankStr
    """The text to look for."""


class Contains(_TextValue):
    """Case-insensitive substring must appear."""

    type: Literal["contains"]
    layer: ClassVar[Layer | None] = "fact"


class NotContains(_TextValue):
    """Case-insensitive substring must not appear (legacy alias of ``contains`` + ``not``)."""

    type: Literal["not_contains"]
    layer: ClassVar[Layer | None] = "fact"


class StartsWith(_TextValue):
    """Output starts with the value (case-insensitive, untrimmed)."""

    type: Literal["starts_with"]
    layer: ClassVar[Layer | None] = "behavior"


class EndsWith(_TextValue):
    """Output ends with the value (case-insensitive, untrimmed)."""

    type: Literal["ends_with"]
    layer: ClassVar[Layer | None] = "behavior"


class Equals(_TextValue):
    """Trimmed output equals the trimmed value (case-sensitive)."""

    type: Literal["equals"]
    layer: ClassVar[Layer | None] = "fact"


class NotEquals(_TextValue):
    """Trimmed output differs from the trimmed value (legacy alias of ``equals`` + ``not``)."""

    type: Literal["not_equals"]
    layer: ClassVar[Layer | None] = "fact"


class _TextValues(AssertionBase):
    values: NonBlankList
    """Non-empty list of non-blank strings."""


class ContainsAll(_TextValues):
    """Every value appears (case-insensitive)."""

    type: Literal["contains_all"]
    layer: ClassVar[Layer | None] = "fact"


class ContainsAny(_TextValues):
    """At least one value appears (case-insensitive)."""

    type: Literal["contains_any"]
    layer: ClassVar[Layer | None] = "fact"


class Regex(AssertionBase):
    """JavaScript regular expression test on the output."""

    type: Literal["regex"]
    layer: ClassVar[Layer | None] = "fact"
    pattern: str
    """JavaScript regex source."""
    flags: str | None = None
    """JavaScript flags (``d g i m s u v y``, each at most once); absent or empty means ``i``."""

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, flags: str | None) -> str | None:
        if flags is not None:
            unknown = sorted(set(flags) - VALID_FLAGS)
            if unknown:
                raise ValueError(f"unknown regex flag {unknown[0]!r} (allowed: d g i m s u v y)")
            if len(set(flags)) != len(flags):
                raise ValueError(f"duplicate regex flag in {flags!r}")
        return flags

    @model_validator(mode="after")
    def _compiles(self) -> Regex:
        try:
            compile_js_regex(self.pattern, self.flags)
        except JsRegexError as exc:
            raise LocatedValueError(str(exc), "pattern") from None
        return self


class JsonValid(AssertionBase):
    """The raw output parses as JSON (any JSON value)."""

    type: Literal["json_valid"]
    layer: ClassVar[Layer | None] = "fact"


class JsonSchema(AssertionBase):
    """The raw output parses as JSON and validates against ``schema``."""

    type: Literal["json_schema"]
    layer: ClassVar[Layer | None] = "fact"
    schema_: dict[str, Any] = Field(alias="schema")
    """JSON Schema (draft from ``$schema``, default draft-07)."""

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        from pytest_omk.models.jsonschema_check import check_schema

        check_schema(schema)
        return schema


# --- numeric bounds --------------------------------------------------------------------------------


class _Bound(AssertionBase):
    value: NonNegativeNumber
    """The bound (a finite number >= 0)."""


class MinLength(_Bound):
    """Output length (UTF-16 code units) >= value."""

    type: Literal["min_length"]
    layer: ClassVar[Layer | None] = "behavior"


class MaxLength(_Bound):
    """Output length (UTF-16 code units) <= value."""

    type: Literal["max_length"]
    layer: ClassVar[Layer | None] = "behavior"


class WordCountMin(_Bound):
    """Whitespace-separated word count >= value."""

    type: Literal["word_count_min"]
    layer: ClassVar[Layer | None] = "behavior"


class WordCountMax(_Bound):
    """Whitespace-separated word count <= value."""

    type: Literal["word_count_max"]
    layer: ClassVar[Layer | None] = "behavior"


class CostMax(_Bound):
    """Reported execution cost in USD <= value."""

    type: Literal["cost_max"]
    layer: ClassVar[Layer | None] = "behavior"


class LatencyMax(_Bound):
    """Execution wall time in milliseconds <= value."""

    type: Literal["latency_max"]
    layer: ClassVar[Layer | None] = "behavior"


class TurnsMin(_Bound):
    """Reported turn count >= value."""

    type: Literal["turns_min"]
    layer: ClassVar[Layer | None] = "behavior"


class TurnsMax(_Bound):
    """Reported turn count <= value."""

    type: Literal["turns_max"]
    layer: ClassVar[Layer | None] = "behavior"


class ToolsCountMin(_Bound):
    """Number of tool calls in the trace >= value."""

    type: Literal["tools_count_min"]
    layer: ClassVar[Layer | None] = "behavior"


class ToolsCountMax(_Bound):
    """Number of tool calls in the trace <= value."""

    type: Literal["tools_count_max"]
    layer: ClassVar[Layer | None] = "behavior"


# --- agent traces ----------------------------------------------------------------------------------


class ToolsCalled(_TextValues):
    """Every named tool was called (case-insensitive names)."""

    type: Literal["tools_called"]
    layer: ClassVar[Layer | None] = "behavior"


class ToolsNotCalled(_TextValues):
    """None of the named tools was called."""

    type: Literal["tools_not_called"]
    layer: ClassVar[Layer | None] = "behavior"


class _ToolNeedle(AssertionBase):
    value: NonBlankStr
    """``Tool:needle``; split at the first colon, so the needle may contain colons."""

    @field_validator("value")
    @classmethod
    def _tool_and_needle(cls, value: str) -> str:
        colon = value.find(":")
        if colon <= 0 or colon == len(value) - 1:
            raise ValueError('must look like "Tool:needle" (a colon that is neither first nor last)')
        return value


class ToolOutputContains(_ToolNeedle):
    """Some call of the tool has output containing the needle (case-insensitive)."""

    type: Literal["tool_output_contains"]
    layer: ClassVar[Layer | None] = "fact"


class ToolInputContains(_ToolNeedle):
    """Some call of the tool has compact-JSON input containing the needle (case-insensitive)."""

    type: Literal["tool_input_contains"]
    layer: ClassVar[Layer | None] = "fact"


class ToolInputNotContains(_ToolNeedle):
    """No call of the tool has input containing the needle."""

    type: Literal["tool_input_not_contains"]
    layer: ClassVar[Layer | None] = "fact"


class MockHit(AssertionBase):
    """The declared mock ``Tool:N`` was hit at least ``threshold`` times."""

    type: Literal["mock_hit"]
    layer: ClassVar[Layer | None] = "behavior"
    value: NonBlankStr
    """``Tool:N``: the literal ``tool`` of a mock and its 1-based ordinal among mocks of that tool."""
    threshold: FiniteNumber = 1.0
    """Minimum hit count (default 1)."""

    @field_validator("value")
    @classmethod
    def _tool_ordinal(cls, value: str) -> str:
        if not _TOOL_REF.fullmatch(value):
            raise ValueError('must look like "Tool:N" with N a positive whole number, e.g. "Read:1"')
        return value


# --- similarity ------------------------------------------------------------------------------------


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


# --- asynchronous: judge and custom ----------------------------------------------------------------

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


# --- composition -----------------------------------------------------------------------------------


class AssertSet(AssertionBase):
    """Combine child assertions with ``all`` (AND, default) or ``any`` (OR); children may nest."""

    type: Literal["assert-set"]
    mode: Literal["any", "all"] = "all"
    """``all``: every child must pass (default); ``any``: at least one."""
    children: Annotated[list[Assertion], Field(min_length=1)]
    """Synchronous child assertions; their ``weight`` is ignored."""

    @field_validator("children")
    @classmethod
    def _synchronous_children(cls, children: list[AssertionBase]) -> list[AssertionBase]:
        for index, child in enumerate(children):
            if child.is_async:
                kind = child.type  # type: ignore[attr-defined]
                raise LocatedValueError(
                    f'async assertion type "{kind}" cannot be nested in "assert-set" '
                    "(judge-scored and custom assertions must stay top-level)",
                    index,
                    "type",
                )
        return children

    def leaf_layers(self) -> set[str]:
        """The layers of every leaf below this set (``"?"`` for a leaf without one)."""
        layers: set[str] = set()
        for child in self.children:
            if isinstance(child, AssertSet):
                layers |= child.leaf_layers()
            else:
                layers.add(child.layer or "?")
        return layers

    def depth(self) -> int:
        """Nesting depth: 1 for a set of leaves."""
        return 1 + max((c.depth() for c in self.children if isinstance(c, AssertSet)), default=0)


Assertion = Annotated[
    Contains
    | NotContains
    | StartsWith
    | EndsWith
    | Equals
    | NotEquals
    | ContainsAll
    | ContainsAny
    | Regex
    | JsonValid
    | JsonSchema
    | MinLength
    | MaxLength
    | WordCountMin
    | WordCountMax
    | CostMax
    | LatencyMax
    | TurnsMin
    | TurnsMax
    | ToolsCountMin
    | ToolsCountMax
    | ToolsCalled
    | ToolsNotCalled
    | ToolOutputContains
    | ToolInputContains
    | ToolInputNotContains
    | MockHit
    | RougeNMin
    | BleuMin
    | LevenshteinMax
    | SemanticSimilarity
    | Faithfulness
    | AnswerRelevancy
    | ContextRecall
    | Custom
    | AssertSet,
    Field(discriminator="type"),
]
"""Any assertion, chosen by its ``type``."""

AssertSet.model_rebuild()

ASSERTION_CLASSES: dict[str, type[AssertionBase]] = {
    cls.model_fields["type"].annotation.__args__[0]: cls
    for cls in Assertion.__origin__.__args__  # type: ignore[attr-defined]
}
"""Every assertion type name mapped to its model class."""


def assertion_layer(assertion: AssertionBase) -> Layer | None:
    """The scoring layer of an assertion; ``None`` for a mixed-layer ``assert-set``."""
    if isinstance(assertion, AssertSet):
        layers = assertion.leaf_layers()
        if len(layers) == 1 and layers <= {"fact", "behavior"}:
            return layers.pop()  # type: ignore[return-value]
        return None
    return assertion.layer
