"""The HTML report's "Judge agreement" section (``--omk-gold``), every text escaped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_omk.report.calibration import figure_lines, read_section, verdict_lines
from pytest_omk.report.html.escape import text


def html_section(document: Mapping[str, Any]) -> str:
    """The HTML report's "Judge agreement" section: each calibration's lines, escaped."""
    items, bad = read_section(document)
    if not items and not bad:
        return ""
    blocks = "".join(
        f'<pre class="calibration{" failed" if item.failures else ""}">'
        + "\n".join(text(line) for line in [*verdict_lines(item), *figure_lines(item, str)])
        + "</pre>"
        for item in items
    )
    note = f"<p>{text(bad)} calibration entries of the report are malformed and not shown.</p>" if bad else ""
    return f'<section class="calibration"><h2>Judge agreement</h2>{blocks}{note}</section>'
