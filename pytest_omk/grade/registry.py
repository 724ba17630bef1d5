"""Dispatch from an assertion to its grader, grading of a sample's assertion list, and the
``assert-set`` grader that recurses through that dispatch.

The table is the union of the ``GRADERS`` tables of the family modules, keyed by assertion class;
adding a type means adding its class and one table entry, never a branch here.

``assert-set`` combines child readings with ``all`` (AND) or ``any`` (OR). Children are graded
recursively with their own ``not`` applied; their weights are ignored (only the top-level
assertion's weight counts). Every child is evaluated, with no short-circuit, because one child
without evidence (no trace, no reported cost ...) makes the whole set missing evidence: neither
"all" nor "any" can be decided honestly without it. It lives here, beside :func:`grade`, because it
is the one grader that needs the whole table.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_omk.grade import agent, custom, judged, similarity, structured, telemetry, text
from pytest_omk.grade._table import entry
from pytest_omk.grade.base import GradeContext, Grader, finish
from pytest_omk.models import AssertionBase, AssertSet
from pytest_omk.models.results import Reading


def _label(index: int, child: AssertionBase, reading: Reading) -> str:
    kind: str = child.type  # type: ignore[attr-defined]
    return f"[{index}] {kind}: {reading.message}" if reading.message else f"[{index}] {kind}"


def _assert_set(a: AssertSet, ctx: GradeContext) -> Reading:
    readings = [grade(child, ctx) for child in a.children]
    labelled = [(r, _label(i, c, r)) for i, (c, r) in enumerate(zip(a.children, readings, strict=True))]
    missing = next((i for i, r in enumerate(readings) if r.status == "missing"), None)
    if missing is not None:
        reading = Reading.missing(
            f"assert-set: a child has no evidence: {labelled[missing][1]}", "child-missing"
        )
        return _about(reading, missing, readings)
    broken = next((i for i, r in enumerate(readings) if r.final), None)
    if broken is not None:
        return _about(
            Reading.error(f"assert-set: a child could not be checked: {labelled[broken][1]}"),
            broken,
            readings,
        )
    passed = sum(r.status == "pass" for r in readings)
    count = f"{passed} of {len(readings)} children passed"
    if passed == len(readings) or (a.mode == "any" and passed > 0):
        return Reading.passed(f"assert-set ({a.mode}): {count}")
    first = next(i for i, r in enumerate(readings) if r.status == "fail")
    need = "every child to pass" if a.mode == "all" else "at least one child to pass"
    failed = Reading.failed(
        f"assert-set ({a.mode}): expected {need}; {count}; first failure {labelled[first][1]}"
    )
    return _about(failed, first, readings)


def _about(reading: Reading, child: int, readings: Sequence[Reading]) -> Reading:
    """``reading`` pointing at child ``child`` (and, for a nested set, at that set's culprit)."""
    return reading.model_copy(update={"at": (child, *readings[child].at)})


GRADERS: dict[type[AssertionBase], Grader] = {
    **text.GRADERS,
    **structured.GRADERS,
    **agent.GRADERS,
    **telemetry.GRADERS,
    **similarity.GRADERS,
    **dict([entry(AssertSet, _assert_set)]),
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
