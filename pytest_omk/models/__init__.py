"""Pydantic models of the eval-sample format and of run results."""

from __future__ import annotations

from pytest_omk.models.assertions import ASSERTION_CLASSES, Assertion, AssertionBase, AssertSet, Layer
from pytest_omk.models.mocks import Mock, MockMatch
from pytest_omk.models.sample import SCHEMA_VERSION, Requires, RubricDimension, Sample, SampleSet

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
