"""Pydantic models of the eval-sample format and of run results.

The names below are imported on first use (PEP 562), so that importing one submodule (the run
records, say) does not build every assertion model, and loading the plugin builds none.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_omk.models.assertions import ASSERTION_CLASSES, Assertion, AssertionBase, AssertSet, Layer
    from pytest_omk.models.mocks import Mock, MockMatch
    from pytest_omk.models.sample import SCHEMA_VERSION, Requires, RubricDimension, Sample, SampleSet


def _assertions() -> ModuleType:
    from pytest_omk.models import assertions

    return assertions


def _mocks() -> ModuleType:
    from pytest_omk.models import mocks

    return mocks


def _sample() -> ModuleType:
    from pytest_omk.models import sample

    return sample


_HOMES: dict[str, Callable[[], ModuleType]] = {
    "ASSERTION_CLASSES": _assertions,
    "Assertion": _assertions,
    "AssertionBase": _assertions,
    "AssertSet": _assertions,
    "Layer": _assertions,
    "Mock": _mocks,
    "MockMatch": _mocks,
    "SCHEMA_VERSION": _sample,
    "Requires": _sample,
    "RubricDimension": _sample,
    "Sample": _sample,
    "SampleSet": _sample,
}
"""Where each name is defined; a function per module so that the imports stay visible."""

__all__ = [
    "ASSERTION_CLASSES",
    "SCHEMA_VERSION",
    "AssertSet",
    "Assertion",
    "AssertionBase",
    "Layer",
    "Mock",
    "MockMatch",
    "Requires",
    "RubricDimension",
    "Sample",
    "SampleSet",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(home(), name)
