"""Dispatch from an assertion to its grader, and grading of a sample's assertion list.

The table is the union of the ``GRADERS`` tables of the family modules, keyed by assertion class;
adding a type means adding its class and one table entry, never a branch here.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_omk.grade import agent, composite, custom, judged, similarity, structured, telemetry, text
from pytest_omk.grade.base import GradeContext, Grader, finish
from pytest_omk.models import AssertionBase
from pytest_omk.models.results import Reading

GRADERS: dict[type[AssertionBase], Grader] = {
    **text.GRADERS,
    **structured.GRADERS,
    **agent.GRADERS,
    **telemetry.GRADERS,
    **similarity.GRADERS,
    **composite.GRADERS,
    **custom.GRADERS,
    **judged.GRADERS,
}
"""Every assertion class mapped to the grader of its raw reading."""


def grade(assertion: AssertionBase, ctx: GradeContext) -> Reading:
    """Grade one assertion: its raw reading with ``not`` applied (never to missing or error readings)."""
    grader = GRADERS.get(type(assertion))
    if grader is None:
        raise TypeError(f"no grader for assertion type {type(assertion).__name__}")
    return finish(assertion, grader(assertion, ctx))


def grade_sample(assertions: Sequence[AssertionBase], ctx: GradeContext) -> list[Reading]:
    """Grade a sample's top-level assertions in order, telling each grader its index."""
    return [grade(assertion, ctx.at(index)) for index, assertion in enumerate(assertions)]
