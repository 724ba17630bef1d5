"""Reading what a run wrote: the JUnit XML and the JSON report (validated against its schema)."""

from __future__ import annotations

import functools
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

REPO = Path(__file__).resolve().parents[2]
REPORT_SCHEMA = REPO / "schemas" / "report" / "v1" / "report.schema.json"


@dataclass
class JUnitCase:
    """One ``<testcase>``: its properties in order, and its verdict elements."""

    classname: str
    name: str
    properties: list[tuple[str, str]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    suite_level: list[tuple[str, str]] = field(default_factory=list)
    """This case's properties that were written on the suite (``<nodeid>::<name>``)."""

    @property
    def props(self) -> dict[str, str]:
        """The sample's properties wherever the JUnit layout put them (testcase or suite)."""
        return dict(self.properties + self.suite_level)


@dataclass
class JUnitReport:
    suite_properties: dict[str, str]
    cases: dict[str, JUnitCase]
    """Keyed by ``<classname>::<name>``, e.g. ``eval-samples.json::s1``."""
    suite: dict[str, str]
    """The ``<testsuite>`` attributes."""


def parse_junit(path: Path) -> JUnitReport:
    """Parse a ``--junitxml`` file (one suite)."""
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None, "no <testsuite> in the JUnit XML"
    suite_props: dict[str, str] = {}
    suite_props_el = suite.find("properties")
    if suite_props_el is not None:
        suite_props = {p.attrib["name"]: p.attrib["value"] for p in suite_props_el.findall("property")}
    cases: dict[str, JUnitCase] = {}
    for el in suite.findall("testcase"):
        case = JUnitCase(classname=el.attrib.get("classname", ""), name=el.attrib["name"])
        props_el = el.find("properties")
        if props_el is not None:
            case.properties = [(p.attrib["name"], p.attrib["value"]) for p in props_el.findall("property")]
        case.failures = [f.attrib.get("message", "") for f in el.findall("failure")]
        case.errors = [f.attrib.get("message", "") + "\n" + (f.text or "") for f in el.findall("error")]
        case.skipped = [f.attrib.get("message", "") for f in el.findall("skipped")]
        cases[f"{case.classname}::{case.name}"] = case
    for name, value in suite_props.items():
        nodeid, _, prop = name.rpartition("::")
        head, _, tail = nodeid.rpartition("::")
        # The testcase's classname is its node id's file part with "/" as ".".
        owner = cases.get(f"{head.replace('/', '.')}::{tail}")
        if owner is not None and prop:
            owner.suite_level.append((prop, value))
    return JUnitReport(suite_properties=suite_props, cases=cases, suite=dict(suite.attrib))


@functools.lru_cache(maxsize=4)
def _validator(schema_text: str) -> Any:
    """A validator for the schema ``schema_text``, the schema itself checked once: checking it
    against its metaschema costs about 0.26 CPU-s, and reports are loaded hundreds of times a
    suite. Keyed by the text, so a schema regenerated during the session is checked again."""
    schema = json.loads(schema_text)
    validator_cls = jsonschema.validators.validator_for(schema)
    validator_cls.check_schema(schema)
    return validator_cls(schema, format_checker=validator_cls.FORMAT_CHECKER)


def load_report(path: Path) -> dict[str, Any]:
    """Load an ``--omk-report`` document and validate it against its JSON Schema."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    validator = _validator(REPORT_SCHEMA.read_text(encoding="utf-8"))
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "report does not match its schema:\n" + "\n".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors
    )
    return document


def report_samples(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The report's samples keyed by ``sample_id``."""
    return {s["sample_id"]: s for s in document["samples"]}


TIMING_FIELDS = ("createdAt", "startedAt", "durationS", "latencyMs", "durationApiMs")
"""The only fields allowed to differ: when the run started and the report was written
(``startedAt``, ``createdAt``), how long the run took (``durationS``) and how long calls took (``latencyMs``, ``durationApiMs``; a replay reports the recorded value, so they match
here, but a live run measures them)."""
_TIMING = re.compile(
    rb'"(' + b"|".join(f.encode() for f in TIMING_FIELDS) + rb')": ("[^"]*"|-?[0-9][0-9.eE+-]*|null)'
)


def normalised(report: Path) -> bytes:
    """The report's bytes with the value of every timing field replaced by a placeholder."""
    return _TIMING.sub(rb'"\1": "<timing>"', report.read_bytes())
