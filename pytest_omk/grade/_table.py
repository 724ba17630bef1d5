"""Typed construction of the per-family grader tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

from pytest_omk.grade.base import GradeContext, Grader
from pytest_omk.models import AssertionBase
from pytest_omk.models.results import Reading

A = TypeVar("A", bound=AssertionBase)


def entry(cls: type[A], grader: Callable[[A, GradeContext], Reading]) -> tuple[type[AssertionBase], Grader]:
    """Pair an assertion class with the grader written for exactly that class.

    The registry dispatches on ``type(assertion)``, so a grader only ever receives instances of the
    class it is paired with; the cast widens its parameter type for the shared table.
    """
    return cls, cast(Grader, grader)
