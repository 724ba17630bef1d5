"""The ``--omk-html`` report: one self-contained HTML file built from the JSON report document.

The page needs no network: its style, script and charts are inline, and a Content-Security-Policy
allows only that inline style and script (by hash), so even text that escaped escaping could neither
run nor load anything. Open it straight from a CI artifact.
"""

from __future__ import annotations

from pytest_omk.report.html.page import render_html

__all__ = ["render_html"]
