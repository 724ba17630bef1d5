"""The app under test comes from a fixture: built once per session from the project's own fixtures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support_app.app import SupportApp


@pytest.fixture(scope="session")
def policies() -> dict[str, str]:
    """The knowledge base (a database or a settings object in a real project)."""
    return json.loads((Path(__file__).parent / "policies.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def omk_app(policies: dict[str, str]) -> Iterator[Any]:
    """What answers every sample: the real app, its model calls recorded and replayed by pytest-omk."""
    app = SupportApp(policies)
    yield lambda request: app.answer(request.prompt)
    app.close()
