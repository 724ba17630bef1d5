"""Grading: assertion readings and the scores computed from them (no pytest involved).

Names load on first use, so that the plugin's start-up (which needs only ``scoring``) does not
import every grader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_omk._lazy import lazy_exports

if TYPE_CHECKING:
    from pytest_omk.grade.base import GradeContext, Grader, excerpt, finish
    from pytest_omk.grade.registry import GRADERS, grade, grade_sample
    from pytest_omk.grade.scoring import Scores, judge_layer, mean_score, ratio_to_score, round2, score_sample

_LAZY = {
    "GradeContext": "base",
    "Grader": "base",
    "excerpt": "base",
    "finish": "base",
    "GRADERS": "registry",
    "grade": "registry",
    "grade_sample": "registry",
    "Scores": "scoring",
    "judge_layer": "scoring",
    "mean_score": "scoring",
    "ratio_to_score": "scoring",
    "round2": "scoring",
    "score_sample": "scoring",
}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "GRADERS",
    "GradeContext",
    "Grader",
    "Scores",
    "excerpt",
    "finish",
    "grade",
    "grade_sample",
    "judge_layer",
    "mean_score",
    "ratio_to_score",
    "round2",
    "score_sample",
]
