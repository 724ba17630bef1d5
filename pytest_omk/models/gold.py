"""A gold dataset in omk's own format: human (or stronger-model) labels of a run's samples.

A directory with one ``metadata`` block (``annotator``, ``annotatedAt``, ``version``, optional
``scale {min, max}`` and ``notes``) and ``annotations: [{sample_id, score, reason?}]`` in one or more
``*.yaml``/``*.yml`` files (:mod:`pytest_omk.loading.gold` reads and checks it).
"""

from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class GoldScale(_Strict):
    """The labels' scale (the quadratic κ's weights are relative to its span)."""

    min: float = Field(allow_inf_nan=False)
    max: float = Field(allow_inf_nan=False)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if not self.max > self.min:
            raise ValueError("metadata.scale must be { min: number, max: number } with max > min")
        return self


DEFAULT_SCALE = GoldScale(min=1, max=5)
"""The scale when the metadata names none (omk's rubric scale)."""


class GoldMetadata(_Strict):
    """Who labelled, when, which version of the labels."""

    annotator: str = Field(min_length=1)
    annotatedAt: str = Field(min_length=1)
    version: str = Field(min_length=1)
    scale: GoldScale | None = None
    notes: str | None = None


class GoldAnnotation(_Strict):
    """One sample's gold score, with the labeller's reason."""

    sample_id: str = Field(min_length=1)
    score: float = Field(allow_inf_nan=False)
    reason: str | None = None


class GoldDataset(_Strict):
    """A whole gold dataset: its metadata and every annotation, in file then list order."""

    directory: str
    metadata: GoldMetadata
    annotations: tuple[GoldAnnotation, ...]

    @property
    def scale(self) -> GoldScale:
        """The metadata's scale, or omk's default 1..5."""
        return self.metadata.scale or DEFAULT_SCALE
