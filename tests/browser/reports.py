"""What the browser tests share: an example's report written by a real run, and a page opened on it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection

from tests.browser.cdp import Page, open_page
from tests.support import REPO, OmkRun, load_report


def example_report(pytester: pytest.Pytester, omk_run: OmkRun, example: str) -> tuple[Path, dict[str, Any]]:
    """Run ``examples/<example>`` from its committed recordings; its HTML page and its JSON report."""
    shutil.copytree(REPO / "examples" / example, pytester.path, dirs_exist_ok=True)
    omk_run(
        "--omk-record-mode=none",
        "-p",
        "no:cacheprovider",
        "--omk-html=report.html",
        "--omk-report=report.json",
    )
    return pytester.path / "report.html", load_report(pytester.path / "report.json")


def open_report(browser: ClientConnection, path: Path) -> Page:
    """The page at ``path``, checked to have logged no error and loaded nothing but itself."""
    page = open_page(browser, path.as_uri())
    assert page.console_errors() == []
    assert page.requests() == [path.as_uri()], "the report must make no request but its own load"
    return page
