"""The ``assert-set`` grader: combine child readings with ``all`` (AND) or ``any`` (OR).

Children are graded recursively through the registry with their own ``not`` applied; their
weights are ignored (only the top-level assertion's weight counts). Every child is evaluated, with
no short-circuit, because one child without evidence (no trace, no reported cost ...) makes the
whole set missing evidence: neither "all" nor "any" can be decided honestly without it.
"""

from __future__ import annotations

from pytest_omk.grade._table import entry
from pytest_omk.grade.base import GradeContext, Grader
from pytest_omk.models import AssertionBase, AssertSet
from pytest_omk.models.results import Reading


def _label(index: int, child: AssertionBase, reading: Reading) -> str:
    kind: str = child.type  # type: ignore[attr-defined]
    return f"[{index}] {kind}: {reading.message}" if reading.message else f"[{index}] {kind}"


def _assert_set(a: AssertSet, ctx: GradeContext) -> Reading:
    # Imported here because the registry imports this module to build its table.
    from pytest_omk.grade.registry import grade

    readings = [grade(child, ctx) for child in a.children]
    labelled = [(r, _label(i, c, r)) for i, (c, r) in enumerate(zip(a.children, readings, strict=True))]
    missing = next((label for r, label in labelled if r.status == "missing"), None)
    if missing is not None:
        return Reading.missing(f"assert-set: a child has no evidence: {missing}", "child-missing")
    broken = next((label for r, label in labelled if r.final), None)
    if broken is not None:
        return Reading.error(f"assert-set: a child could not be checked: {broken}")
    passed = sum(r.status == "pass" for r in readings)
    count = f"{passed} of {len(readings)} children passed"
    if passed == len(readings) or (a.mode == "any" and passed > 0):
        return Reading.passed(f"assert-set ({a.mode}): {count}")
    first = next(label for r, label in labelled if r.status == "fail")
    need = "every child to pass" if a.mode == "all" else "at least one child to pass"
    return Reading.failed(f"assert-set ({a.mode}): expected {need}; {count}; first failure {first}")


GRADERS: dict[type[AssertionBase], Grader] = dict([entry(AssertSet, _assert_set)])
"""The composition grader, keyed by assertion class."""
