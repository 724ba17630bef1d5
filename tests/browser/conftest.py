"""The browser used by the HTML report's tests: headless Chromium from the system packages.

Without Chromium the tests skip with one reason; under CI (``CI`` set) a missing Chromium is a
failure, since ``.ci/run`` installs it.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator

import pytest
from websockets.sync.client import ClientConnection

from tests.browser.cdp import chromium, find_chromium


def preload_stages() -> None:
    """Import the plugin's lazily loaded stages before any in-process pytester run.

    Such a run forgets every module first imported inside it, so a second run would meet second
    copies of the assertion classes and the grader registry would not know them.
    """
    for name in (
        "pytest_omk.run.pipeline",
        "pytest_omk.grade.registry",
        "pytest_omk.plugin.subtests",
        "pytest_omk.report.outputs",
    ):
        importlib.import_module(name)


preload_stages()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClientConnection]:
    """One Chromium per test module (each test opens its own tab)."""
    binary = find_chromium()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs it (apt-get install -y chromium)")
        pytest.skip(
            "chromium is not installed (apt-get install chromium): the HTML report's browser tests need it"
        )
    with chromium(binary, tmp_path_factory.mktemp("chromium-profile")) as ws:
        yield ws


@pytest.fixture(autouse=True)
def _offline(no_provider_env: None) -> None:
    """Every test of this folder runs with ``no_provider_env``."""
