"""The default JUnit file validates against the JUnit schema pytest's output is written for (the
Jenkins xUnit plugin's ``junit-10.xsd``), in both of pytest's families: per-sample properties go
where the family's schema allows them (the suite for xunit2, each testcase for xunit1)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from lxml import etree  # type: ignore[import-untyped]  # no stubs shipped

from tests.support import REPO, OmkRun, parse_junit, sample, write_sample_set

XSD = REPO / "tests" / "data" / "junit" / "junit-10.xsd"
XS = "{http://www.w3.org/2001/XMLSchema}"


def xunit2_schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(XSD)))


def xunit1_schema() -> etree.XMLSchema:
    """junit-10.xsd plus what pytest's legacy family adds to every testcase (its own tests' too):
    the ``file``, ``line`` and ``url`` attributes and a ``<properties>`` child."""
    tree = copy.deepcopy(etree.parse(str(XSD)))
    testcase = tree.find(f"{XS}element[@name='testcase']/{XS}complexType")
    assert testcase is not None
    for name in ("file", "line", "url"):
        etree.SubElement(testcase, f"{XS}attribute", name=name, type="xs:string")
    choice = testcase.find(f"{XS}sequence/{XS}choice")
    assert choice is not None
    choice.insert(0, etree.Element(f"{XS}element", ref="properties"))
    return etree.XMLSchema(tree)


def validate(schema: etree.XMLSchema, path: Path) -> None:
    document = etree.parse(str(path))
    assert schema.validate(document), "\n".join(str(e) for e in schema.error_log)


@pytest.fixture
def samples(pytester: pytest.Pytester) -> None:
    write_sample_set(
        pytester,
        sample("good", "hello", assertions=[{"type": "contains", "value": "hello"}]),
        sample(
            "bad",
            "hello",
            assertions=[{"type": "contains", "value": "zzz"}, {"type": "cost_max", "value": 1}],
        ),
        sample("trip", "hello", assertions=[{"type": "contains", "value": "zzz"}], tripwire=True),
    )


@pytest.mark.usefixtures("samples")
def test_default_xunit2_file_validates_with_properties_on_the_suite(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    omk_run("--omk-executor=echo", "--junitxml=j.xml")
    validate(xunit2_schema(), pytester.path / "j.xml")
    junit = parse_junit(pytester.path / "j.xml")
    assert junit.suite_properties["eval-samples.json::bad::omk.score.composite"] == "3.00"
    assert all(case.properties == [] for case in junit.cases.values())


@pytest.mark.usefixtures("samples")
def test_default_xunit1_file_validates_with_properties_per_testcase(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    pytester.makeini("[pytest]\njunit_family = xunit1\n")
    omk_run("--omk-executor=echo", "--junitxml=j.xml")
    validate(xunit1_schema(), pytester.path / "j.xml")
    case = parse_junit(pytester.path / "j.xml").cases["eval-samples.json::bad"]
    assert case.props["omk.score.composite"] == "3.00"


@pytest.mark.usefixtures("samples")
def test_testcase_properties_when_asked(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.makeini("[pytest]\nomk_junit_properties = testcase\n")
    omk_run("--omk-executor=echo", "--junitxml=j.xml")
    assert (
        parse_junit(pytester.path / "j.xml").cases["eval-samples.json::bad"].props["omk.score.composite"]
        == "3.00"
    )
