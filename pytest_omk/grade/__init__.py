"""Grading: assertion readings and the scores computed from them (no pytest involved)."""

from __future__ import annotations

from pytest_omk.grade.base import GradeContext, Grader, excerpt, finish
from pytest_omk.grade.registry import GRADERS, grade, grade_sample
from pytest_omk.grade.scoring import Scores, judge_layer, mean_score, ratio_to_score, round2, score_sample

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
