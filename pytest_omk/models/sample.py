"""The eval-sample document (schema ``omk.eval-sample-set/v2``): root, samples and their parts."""

import math
from collections.abc import Iterator
from typing import Annotated, Literal, Self

from pydantic import Field, field_validator, model_validator

from pytest_omk.js.text import js_trim
from pytest_omk.models._base import (
    LocatedValueError,
    NonBlankStr,
    NonEmptyStr,
    StrictModel,
)
from pytest_omk.models.assertions import (
    MAX_ASSERTION_DEPTH,
    Assertion,
    AssertionBase,
    AssertSet,
    ContextRecall,
    Faithfulness,
    MockHit,
)
from pytest_omk.models.mocks import Mock, mock_keys

SCHEMA_VERSION = "omk.eval-sample-set/v2"
RUBRIC_SUM_TOLERANCE = 1e-9


class RubricDimension(StrictModel):
    """One independently judged rubric dimension."""

    criterion: NonBlankStr
    """The single scoring criterion the judge applies."""
    weight: Annotated[float, Field(gt=0, le=1)]
    """Weight in (0, 1]; a sample's weights sum to 1."""

    @field_validator("weight")
    @classmethod
    def _finite(cls, weight: float) -> float:
        if not math.isfinite(weight):
            raise ValueError("must be a finite number")
        return weight


class Environment(StrictModel):
    """Declared preconditions, rendered into the prompt only (nothing is materialised)."""

    cli_available: list[NonBlankStr] | None = None
    """Command-line tools the task may assume."""
    files_available: list[NonBlankStr] | None = None
    """Paths the task may refer to."""
    notes: str | None = None
    """Free-form notes."""


CoverKind = Literal[
    "skill", "skill_file", "frontmatter", "reference", "script", "hard_rule", "workflow", "workflow_node"
]


class Cover(StrictModel):
    """A declared skill-structure anchor (Skill Map only; never graded)."""

    targetKind: CoverKind
    """What kind of skill part the sample exercises."""
    ref: NonEmptyStr
    """Which one: a path relative to the skill root, a rule or workflow id, or ``workflowId.nodeId``."""


class Requires(StrictModel):
    """What the machine must provide before the file's samples can run."""

    tools: list[NonBlankStr] | None = None
    """Executables that must be on PATH."""
    files: list[NonBlankStr] | None = None
    """Files that must exist, relative to the sample file's directory."""
    env: list[NonBlankStr] | None = None
    """Environment variables that must be set and non-empty."""
    preflight: list[NonBlankStr] | None = None
    """Shell commands that must exit 0 within 10 s."""


class Sample(StrictModel):
    """One eval case: a prompt plus how to grade the model's answer."""

    sample_id: NonBlankStr
    """Unique id; becomes the pytest item name."""
    prompt: NonBlankStr
    """User prompt sent to the model."""
    context: str | None = None
    """Extra context appended to the prompt in a fenced block."""
    cwd: NonEmptyStr | None = None
    """Working directory for this sample, relative to the sample file's directory."""
    rubric: Annotated[dict[str, RubricDimension], Field(min_length=1)] | None = None
    """Named, independently judged dimensions."""
    assertions: list[Assertion] | None = None
    """Checks on the output."""
    allowedTools: list[NonBlankStr] | None = None
    """Tools the executor may let the model use for this sample."""
    capability: list[NonBlankStr] | None = None
    """Capability dimensions the sample covers (metadata; becomes ``omk_capability`` markers)."""
    difficulty: Literal["easy", "medium", "hard"] | None = None
    """Difficulty bucket (metadata; becomes an ``omk_difficulty`` marker)."""
    construct_: NonEmptyStr | None = Field(default=None, alias="construct")
    """What the sample measures (necessity, quality, capability, or your own word)."""
    provenance: Literal["human", "llm-generated", "production-trace"] | None = None
    """Where the sample came from (metadata)."""
    covers: list[Cover] | None = None
    """Declared skill-structure anchors (Skill Map only; never graded)."""
    tripwire: bool | None = None
    """A trap the model is expected to fail; the pytest item is marked ``xfail(strict=False)``."""
    mocks: Annotated[list[Mock], Field(min_length=1)] | None = None
    """Tool calls to intercept; needs an executor that supports mock interception."""
    mocksStrict: bool | None = None
    """Deny tool calls that match no mock (default true); only allowed together with ``mocks``."""
    environment: Environment | None = None
    """Preconditions described to the model in the prompt (nothing is materialised)."""

    @field_validator("rubric")
    @classmethod
    def _rubric(cls, rubric: dict[str, RubricDimension] | None) -> dict[str, RubricDimension] | None:
        if rubric is None:
            return None
        for name in rubric:
            if not js_trim(name):
                raise LocatedValueError("rubric dimension names must not be blank", name)
        total = math.fsum(d.weight for d in rubric.values())
        if abs(total - 1) > RUBRIC_SUM_TOLERANCE:
            raise ValueError(f"rubric weights must sum to 1 (within 1e-9); they sum to {total!r}")
        return rubric

    @model_validator(mode="after")
    def _cross_field(self) -> Self:
        if self.mocksStrict is not None and not self.mocks:
            raise LocatedValueError('"mocksStrict" requires a non-empty "mocks" array', "mocksStrict")
        keys = set(mock_keys(self.mocks or []))
        has_context = bool(self.context and js_trim(self.context))
        for index, assertion in enumerate(self.assertions or []):
            if isinstance(assertion, AssertSet) and assertion.depth() >= MAX_ASSERTION_DEPTH:
                raise LocatedValueError(
                    f"assert-set nesting reaches {assertion.depth()} levels "
                    f"(at most {MAX_ASSERTION_DEPTH - 1})",
                    "assertions",
                    index,
                )
            if isinstance(assertion, Faithfulness | ContextRecall):
                ref = assertion.reference
                if not (ref and js_trim(ref)) and not has_context:
                    raise LocatedValueError(
                        f'"{assertion.type}" needs a non-blank "reference" or a non-blank sample "context"',
                        "assertions",
                        index,
                    )
            for leaf_path, leaf in _walk_leaves(assertion, ("assertions", index)):
                if isinstance(leaf, MockHit) and leaf.value not in keys:
                    available = ", ".join(mock_keys(self.mocks or [])) or "(none)"
                    raise LocatedValueError(
                        f'"mock_hit" references missing mock "{leaf.value}"; declared mocks: {available}',
                        *leaf_path,
                        "value",
                    )
        return self

    @property
    def mocks_strict(self) -> bool:
        """Whether unmatched tool calls are denied (the format's default is ``True``)."""
        return True if self.mocksStrict is None else self.mocksStrict


def iter_leaves(assertion: AssertionBase) -> Iterator[AssertionBase]:
    """Yield the non-``assert-set`` assertions inside ``assertion`` (or itself)."""
    for _, leaf in _walk_leaves(assertion, ()):
        yield leaf


def _walk_leaves(
    assertion: AssertionBase, path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], AssertionBase]]:
    """Like :func:`iter_leaves`, with each leaf's path below ``path`` (``..., "children", 2``)."""
    if isinstance(assertion, AssertSet):
        for index, child in enumerate(assertion.children):
            yield from _walk_leaves(child, (*path, "children", index))
    else:
        yield path, assertion


class SampleSet(StrictModel):
    """The root of an eval-samples file."""

    schemaVersion: Literal["omk.eval-sample-set/v2"]
    """Must be ``omk.eval-sample-set/v2``."""
    samples: Annotated[list[Sample], Field(min_length=1)]
    """The eval cases (at least one); every ``sample_id`` is unique."""
    requires: Requires | None = None
    """What the machine must provide; unmet requirements skip the file's items."""

    @model_validator(mode="after")
    def _unique_ids(self) -> Self:
        first: dict[str, int] = {}
        for index, sample in enumerate(self.samples):
            if sample.sample_id in first:
                raise LocatedValueError(
                    f'duplicate sample_id "{sample.sample_id}" (first defined at samples[{first[sample.sample_id]}])',
                    "samples",
                    index,
                    "sample_id",
                )
            first[sample.sample_id] = index
        return self
