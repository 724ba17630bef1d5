"""Graders for the judge-scored types: semantic_similarity, faithfulness, answer_relevancy, context_recall.

The judge runs before grading (it needs a model call, possibly replayed from a recording) and
leaves one reading per judge-scored assertion in ``GradeContext.judge_readings``, keyed by the
assertion's top-level index. These graders only hand that reading on; ``not`` is applied by the
registry and never inverts a missing reading (no judge, unparseable reply).
"""

from __future__ import annotations

from pytest_omk.grade._table import entry
from pytest_omk.grade.base import GradeContext, Grader
from pytest_omk.models import AssertionBase
from pytest_omk.models.assertions import AnswerRelevancy, ContextRecall, Faithfulness, SemanticSimilarity
from pytest_omk.models.results import Reading

NO_JUDGE = "no judge configured (set --omk-judge), so this judge-scored check was not run"


def _judged(a: AssertionBase, ctx: GradeContext) -> Reading:
    reading = ctx.judge_readings.get(ctx.index)
    return reading if reading is not None else Reading.missing(NO_JUDGE, "no-judge")


GRADERS: dict[type[AssertionBase], Grader] = dict(
    [
        entry(SemanticSimilarity, _judged),
        entry(Faithfulness, _judged),
        entry(AnswerRelevancy, _judged),
        entry(ContextRecall, _judged),
    ]
)
"""Judge-scored graders, keyed by assertion class."""
