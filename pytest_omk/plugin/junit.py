"""``omk_junit_properties = suite``: per-sample JUnit properties at suite level.

pytest writes ``item.user_properties`` as ``<properties>`` inside each ``<testcase>``, which the
xunit2 schema (and Jenkins xUnit-style validators) reject. In ``suite`` mode, on the process that
writes the XML (the controller under xdist), each sample's properties are taken off its teardown
report before the JUnit writer sees it, and added to the ``<testsuite>``'s properties as
``<nodeid>::<name>`` (``eval-samples.json::s1::omk.score.composite``).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.plugin.compat import junit_xml
from pytest_omk.report.records import junit_properties


def add_junit_properties(item: pytest.Item, record: dict[str, Any]) -> None:
    """Attach the sample's JUnit properties, derived once from its final record, to the item.

    JUnit writes the properties of the teardown report, so this runs when that report is made
    (graded, skipped or errored alike); the ``pytest_omk_junit_properties`` hook may adjust them.
    """
    props = junit_properties(record)
    item.config.hook.pytest_omk_junit_properties(item=item, result=record, properties=props)
    item.user_properties.extend((str(k), str(v)) for k, v in props)


class SuiteLevelProperties:
    """Moves the properties of sample items from their testcase to the suite."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if (
            report.when != "teardown"
            or getattr(report, "omk_record", None) is None
            or not report.user_properties
        ):
            return
        xml = junit_xml(self.config)
        if xml is None:
            return
        for name, value in report.user_properties:
            xml.add_global_property(f"{report.nodeid}::{name}", str(value))
        report.user_properties = []
