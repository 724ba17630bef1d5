"""The calibration figures as text: hostile judge reasons and ids stay inert in every sink, a
malformed report entry is counted, and the CSV export defuses formulas."""

from __future__ import annotations

import csv
import io

from pytest_omk._util.visible import visible
from pytest_omk.models.calibration import Calibration, Disagreement, Rate
from pytest_omk.report.calibration import csv_text, failure_text, markdown_section
from pytest_omk.report.html.calibration import html_section

HOSTILE = "<script>alert(1)</script> ``` \u202e\x1b[2J"


def _found() -> Calibration:
    return Calibration(
        dataset="gold", annotator="a<b>", version="1", pairs=3, alpha=0.5, alphaLow=0.1, alphaHigh=0.8,
        threshold=3, tnr=Rate(hits=0, total=2, rate=0.0, low=0.0, high=0.66),
        worst=[Disagreement(sample_id=HOSTILE, gold=1, judge=5, reason=HOSTILE)], failures=["TNR below"],
    )  # fmt: skip


def test_the_failure_text_passes_every_foreign_text_through_the_escaper() -> None:
    text = failure_text(_found(), visible)
    assert "FAILED gate: TNR below" in text and "TPR undefined" in text
    assert "\x1b" not in text and "\u202e" not in text


def test_html_escapes_and_markdown_fences_hostile_text() -> None:
    document = {"calibration": [_found().model_dump(mode="json"), {"not": "an entry"}]}
    page = html_section(document)
    assert "<script>" not in page and "&lt;script&gt;" in page and "\u202e" not in page
    assert "1 calibration entries of the report are malformed" in page
    lines = markdown_section(document)
    # The fence is longer than the ``` inside the reason, so nothing in it can close it.
    assert lines[2] == "````text" and "````" in lines[3:] and "\x1b" not in "".join(lines)


def test_csv_cells_that_would_run_as_formulas_are_quoted() -> None:
    text = csv_text([("gold", "", "=HYPERLINK(1)", 1.0, 5.0, False, True)])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:3] == ["dataset", "variant", "sample_id"] and rows[1][2] == "'=HYPERLINK(1)"
