"""What one calibration item found: a gold dataset's labels against the judge's scores.

Written by :mod:`pytest_omk.compare.calibration`, shown by the terminal, the failure text and the
reports (the JSON report's ``calibration`` list).
"""

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class Rate(_Strict):
    """A share with its Wilson 95 % interval (``hits`` of ``total``)."""

    hits: int = Field(ge=0)
    total: int = Field(ge=1)
    rate: float
    low: float
    high: float


class Disagreement(_Strict):
    """One sample where the judge and the gold label differ."""

    sample_id: str
    gold: float
    judge: float
    reason: str = ""
    """The judge's reasons (each rubric dimension's), as the record has them."""


class Calibration(_Strict):
    """One gold dataset (and variant) compared with the judge layer's scores."""

    dataset: str
    variant: str | None = None
    annotator: str
    version: str
    pairs: int = Field(ge=0)
    alpha: float | None = None
    """Krippendorff's α, interval distance (``None``: undefined, no variance)."""
    alphaLow: float | None = None
    alphaHigh: float | None = None
    """α's seeded 95 % percentile bootstrap interval over the pairs."""
    ordinalAlpha: float | None = None
    kappa: float | None = None
    """Cohen's κ, quadratic weights on the dataset's scale."""
    pearson: float | None = None
    threshold: float
    """A score at or above it is a pass (``--omk-rubric-threshold``), for gold and judge alike."""
    tpr: Rate | None = None
    """Of the samples the labels pass, the share the judge passes too."""
    tnr: Rate | None = None
    """Of the samples the labels fail, the share the judge fails too."""
    worst: list[Disagreement] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    """Gold sample ids no collected sample has."""
    unjudged: list[str] = Field(default_factory=list)
    """Gold sample ids collected but without a judge score (no rubric, or no reading)."""
    contamination: str | None = None
    failures: list[str] = Field(default_factory=list)
    """The gates (``--omk-min-agreement``, ``--omk-min-tpr``, ``--omk-min-tnr``) that failed."""
