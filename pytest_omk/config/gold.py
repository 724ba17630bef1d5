"""The judge-calibration options of one run (``--omk-gold`` and its gates), as plain values."""

from __future__ import annotations

from dataclasses import dataclass

JUDGE_PROBES = ("length",)
"""``--omk-judge-probe``'s probes (:mod:`pytest_omk.judge.probe`)."""


@dataclass(frozen=True)
class GoldSettings:
    """``--omk-gold`` datasets, their gates and the export file."""

    datasets: tuple[str, ...] = ()
    """Gold dataset directories (absolute), one calibration item each (per variant)."""
    min_agreement: float | None = None
    """``--omk-min-agreement``: the lowest allowed lower bound of α's 95 % interval."""
    min_tpr: float | None = None
    min_tnr: float | None = None
    min_judge_consistency: float | None = None
    """``--omk-min-judge-consistency``: the lowest allowed α of a dimension across judge replicates."""
    max_judge_bias: float | None = None
    """``--omk-max-judge-bias``: the largest allowed length-probe shift (its interval beyond ±X fails)."""
    export: str | None = None
    """``--omk-gold-export``: where the (sample, gold, judge, pass/fail) rows are written as CSV."""
