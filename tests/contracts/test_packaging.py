"""What a user sees of the distribution: licence, metadata, and the schemas inside the wheel."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "pytest_omk"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_licence_is_an_spdx_expression_with_its_file() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_index_page_metadata() -> None:
    project = PYPROJECT["project"]
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(project["urls"])
    classifiers = project["classifiers"]
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert not any(c.startswith("License ::") for c in classifiers), "SPDX expression replaces it"


def test_every_schema_ships_in_the_package_unchanged() -> None:
    repository = sorted(p.relative_to(REPO) for p in (REPO / "schemas").rglob("*.json"))
    assert {p.as_posix() for p in repository} >= {
        "schemas/eval-samples/v2/eval-sample-set.schema.json",
        "schemas/report/v1/report.schema.json",
    }
    for relative in repository:
        assert (PACKAGE / relative).read_bytes() == (REPO / relative).read_bytes(), relative
    assert "schemas/**/*.json" in PYPROJECT["tool"]["setuptools"]["package-data"]["pytest_omk"]


def test_the_sdist_carries_tests_docs_and_licence() -> None:
    manifest = (REPO / "MANIFEST.in").read_text(encoding="utf-8").split()
    for needed in ("LICENSE", "docs", "tests", "schemas", "examples"):
        assert needed in manifest, needed
