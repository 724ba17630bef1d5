"""The eval-sample document (schema ``omk.eval-sample-set/v2``): root, samples and their parts."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from pytest_omk.models._base import NonBlankList, NonBlankStr, NonEmptyStr, StrictModel, js_trim
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
    ref: NonEmptyStr


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
    capability: list[NonBlankStr] | None = None
    difficulty: Literal["easy", "medium", "hard"] | None = None
    construct_: NonEmptyStr | None = Field(default=None, alias="construct")
    """What the sample measures (necessity, quality, capability, or your own word)."""
    provenance: Literal["human", "llm-generated", "production-trace"] | None = None
    covers: list[Cover] | None = None
    tripwire: bool | None = None
    mocks: Annotated[list[Mock], Field(min_length=1)] | None = None
    mocksStrict: bool | None = None
    environment: Environment | None = None

    @field_validator("rubric")
    @classmethod
    def _rubric(cls, rubric: dict[str, RubricDimension] | None) -> dict[str, RubricDimension] | None:
        if rubric is None:
            return None
        for name in rubric:
            if not js_trim(name):
                raise ValueError("rubric dimension names must not be blank")
        total = math.fsum(d.weight for d in rubric.values())
        if abs(total - 1) > RUBRIC_SUM_TOLERANCE:
            raise ValueError(f"rubric weights must sum to 1 (within 1e-9); they sum to {total!r}")
        return rubric

    @model_validator(mode="after")
    def _cross_field(self) -> Sample:
        if self.mocksStrict is not None and not self.mocks:
            raise ValueError('"mocksStrict" requires a non-empty "mocks" array')
        keys = set(mock_keys(self.mocks or []))
        has_context = bool(self.context and js_trim(self.context))
        for index, assertion in enumerate(self.assertions or []):
            if isinstance(assertion, AssertSet) and assertion.depth() >= MAX_ASSERTION_DEPTH:
                raise ValueError(
                    f"assertions[{index}]: assert-set nesting reaches {assertion.depth()} levels "
                    f"(at most {MAX_ASSERTION_DEPTH - 1})"
                )
            if isinstance(assertion, Faithfulness | ContextRecall):
                ref = assertion.reference
                if not (ref and js_trim(ref)) and not has_context:
                    raise ValueError(
                        f'assertions[{index}]: "{assertion.type}" needs a non-blank "reference" '
                        'or a sample "context"'
                    )
            for leaf in iter_leaves(assertion):
                if isinstance(leaf, MockHit) and leaf.value not in keys:
                    available = ", ".join(mock_keys(self.mocks or [])) or "(none)"
                    raise ValueError(
                        f'assertions[{index}]: "mock_hit" references missing mock "{leaf.value}"; '
                        f"declared mocks: {available}"
                    )
        return self

    @property
    def mocks_strict(self) -> bool:
        """Whether unmatched tool calls are denied (the format's default is ``True``)."""
        return True if self.mocksStrict is None else self.mocksStrict


def iter_leaves(assertion: AssertionBase) -> Iterator[AssertionBase]:
    """Yield the non-``assert-set`` assertions inside ``assertion`` (or itself)."""
    if isinstance(assertion, AssertSet):
        for child in assertion.children:
            yield from iter_leaves(child)
    else:
        yield assertion


class SampleSet(StrictModel):
    """The root of an eval-samples file."""

    schemaVersion: Literal["omk.eval-sample-set/v2"]
    """Must be ``omk.eval-sample-set/v2``."""
    samples: Annotated[list[Sample], Field(min_length=1)]
    requires: Requires | None = None

    @model_validator(mode="after")
    def _unique_ids(self) -> SampleSet:
        first: dict[str, int] = {}
        for index, sample in enumerate(self.samples):
            if sample.sample_id in first:
                raise ValueError(
                    f'duplicate sample_id "{sample.sample_id}" at samples[{index}] '
                    f"(first defined at samples[{first[sample.sample_id]}])"
                )
            first[sample.sample_id] = index
        return self
