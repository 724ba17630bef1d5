"""Every assertion type has a grader, a scoring layer and a documented section."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_omk.grade.registry import GRADERS
from pytest_omk.models import ASSERTION_CLASSES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "assertions.md"
TYPES = sorted(ASSERTION_CLASSES)


def test_the_format_has_36_assertion_types() -> None:
    assert len(ASSERTION_CLASSES) == 36


@pytest.mark.parametrize("name", TYPES)
def test_every_type_has_a_grader(name: str) -> None:
    assert ASSERTION_CLASSES[name] in GRADERS


def test_no_grader_for_an_unknown_class() -> None:
    assert set(GRADERS) == set(ASSERTION_CLASSES.values())


@pytest.mark.parametrize("name", [t for t in TYPES if t != "assert-set"])
def test_every_leaf_type_has_a_layer(name: str) -> None:
    assert ASSERTION_CLASSES[name].layer in {"fact", "behavior"}


@pytest.mark.parametrize("name", TYPES)
def test_every_type_is_documented(name: str) -> None:
    headings = set(re.findall(r"^### `?([\w-]+)`?\s*$", DOCS.read_text(encoding="utf-8"), flags=re.MULTILINE))
    assert name in headings
