"""Pydantic models of the eval-sample format and of run results.

The names below are imported on first use (PEP 562), so that importing one submodule (the run
records, say) does not build every assertion model, and loading the plugin builds none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_omk.models.assertions import ASSERTION_CLASSES, Assertion, AssertionBase, AssertSet, Layer
    from pytest_omk.models.mocks import Mock, MockMatch
    from pytest_omk.models.sample import SCHEMA_VERSION, Requires, RubricDimension, Sample, SampleSet

_HOMES = {
    "ASSERTION_CLASSES": "assertions",
    "Assertion": "assertions",
    "AssertionBase": "assertions",
    "AssertSet": "assertions",
    "Layer": "assertions",
    "Mock": "mocks",
    "MockMatch": "mocks",
    "SCHEMA_VERSION": "sample",
    "Requires": "sample",
    "RubricDimension": "sample",
    "Sample": "sample",
    "SampleSet": "sample",
}

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
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
