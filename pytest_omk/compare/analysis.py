"""Everything the comparisons add to a run's summary, computed once from the sample records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_omk.compare.baseline import compare_with_baseline
from pytest_omk.compare.bootstrap import compare_variants
from pytest_omk.compare.coverage import coverage
from pytest_omk.compare.variants import Variant, variant_summaries


def analyze(
    rows: Sequence[Mapping[str, Any]],
    *,
    variants: Sequence[Variant],
    rootdir: Path,
    baseline: Mapping[str, Any] | None = None,
    baseline_path: str = "",
    threshold: float | None = None,
) -> dict[str, Any]:
    """The ``variants``, ``comparisons``, ``baseline`` and ``coverage`` sections of the report."""
    return {
        "variants": variant_summaries(rows, variants, rootdir),
        "comparisons": compare_variants(rows, [v.name for v in variants]),
        "baseline": compare_with_baseline(rows, baseline, path=baseline_path, threshold=threshold)
        if baseline is not None
        else None,
        "coverage": coverage(rows),
    }
