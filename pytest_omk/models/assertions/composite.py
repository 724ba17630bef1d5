"""``assert-set``, the union of every assertion type, and the lookups built on it."""

from typing import Annotated, Literal

from pydantic import Field, field_validator

from pytest_omk.models._base import LocatedValueError
from pytest_omk.models.assertions import agent, bounds, judged, similarity, text
from pytest_omk.models.assertions._base import AssertionBase, Layer


class AssertSet(AssertionBase):
    """Combine child assertions with ``all`` (AND, default) or ``any`` (OR); children may nest."""

    type: Literal["assert-set"]
    mode: Literal["any", "all"] = "all"
    """``all``: every child must pass (default); ``any``: at least one."""
    children: Annotated[list["Assertion"], Field(min_length=1)]  # defined below
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
    text.Contains
    | text.NotContains
    | text.StartsWith
    | text.EndsWith
    | text.Equals
    | text.NotEquals
    | text.ContainsAll
    | text.ContainsAny
    | text.Regex
    | text.JsonValid
    | text.JsonSchema
    | bounds.MinLength
    | bounds.MaxLength
    | bounds.WordCountMin
    | bounds.WordCountMax
    | bounds.CostMax
    | bounds.LatencyMax
    | bounds.TurnsMin
    | bounds.TurnsMax
    | bounds.ToolsCountMin
    | bounds.ToolsCountMax
    | agent.ToolsCalled
    | agent.ToolsNotCalled
    | agent.ToolOutputContains
    | agent.ToolInputContains
    | agent.ToolInputNotContains
    | agent.MockHit
    | similarity.RougeNMin
    | similarity.BleuMin
    | similarity.LevenshteinMax
    | judged.SemanticSimilarity
    | judged.Faithfulness
    | judged.AnswerRelevancy
    | judged.ContextRecall
    | judged.Custom
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
