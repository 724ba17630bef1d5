"""pytest-html integration: score columns, the sample's readings as extras, one row per sample.

Registered only when pytest-html is active. pytest-html draws a row for each distinct (phase,
outcome) report of a test, so a sample whose subtests both passed and failed would show a passed
row beside its failed one; the subtest reports of omk items are dropped here, leaving the item's
own report, which already carries the verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk.report.html.details import readings_html
from pytest_omk.report.view import money, sample_cost, score_text

if TYPE_CHECKING:
    from pytest_omk.recordings.scrub import Scrubber

COLUMNS = (("composite", "Composite"), ("fact", "Fact"), ("behavior", "Behavior"), ("judge", "Judge"))
"""Score columns after pytest-html's own Result/Test/Duration, then Cost."""
_INSERT_AT = 3  # after result, test id and duration; before links


class PytestHtmlColumns:
    """The pytest-html hooks; records arrive on each omk item's teardown report (also under xdist)."""

    def __init__(self, scrubber: Callable[[], Scrubber]) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self._scrubber = scrubber
        """The run's one scrubber (asked at each report: it is final only once calls exist)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # pytest-html renders a test when its teardown report arrives (trylast); the record is on
        # that same report, so it is known here before any of the test's rows is drawn.
        record = getattr(report, "omk_record", None)
        if record is None or report.when != "teardown":
            return
        self.records[report.nodeid] = record
        from pytest_html import extras

        # The page is a report file like the others: the record's secrets are masked first.
        shown = self._scrubber().data(record)
        extra = extras.html(f'<div class="omk">{readings_html(shown)}</div>')
        report.extras = [*getattr(report, "extras", []), extra]  # type: ignore[attr-defined]  # pytest-html reads it

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        headers = [
            f'<th class="sortable" data-column-type="omk_{key}">{title}</th>' for key, title in COLUMNS
        ]
        headers.append('<th class="sortable" data-column-type="omk_cost">Cost</th>')
        cells[_INSERT_AT:_INSERT_AT] = headers

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        record = self.records.get(report.nodeid)
        if record is not None and isinstance(report, pytest.SubtestReport):
            del cells[:]  # an empty row list tells pytest-html to draw no row
            return
        scores = (record or {}).get("scores") or {}
        values = [score_text(scores.get(key)) if record else "" for key, _ in COLUMNS]
        values.append(money(sample_cost(record)) if record and sample_cost(record) is not None else "")
        keys = [*(key for key, _ in COLUMNS), "cost"]
        cells[_INSERT_AT:_INSERT_AT] = [
            f'<td class="col-omk_{k}">{v}</td>' for k, v in zip(keys, values, strict=True)
        ]
