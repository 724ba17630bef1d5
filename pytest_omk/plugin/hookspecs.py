"""Hooks pytest-omk adds; implement them in a ``conftest.py``."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec(firstresult=True)
def pytest_omk_make_executor(config: pytest.Config) -> Any:
    """Return the model under test: an ``Executor`` or a (sync or async) callable.

    The callable receives an ``ExecutionRequest`` (``prompt``, ``system``, ``model``, ``sample``,
    ``cwd`` ...) and returns a ``str``, a dict in the command-output shape, or an
    ``ExecutionResult``. It is the project's own app: it runs for every sample, and the model calls
    it makes are recorded and replayed. ``--omk-executor`` on the command line and an ``omk_app``
    fixture win over the hook; return ``None`` to leave the choice to ``omk_executor``.
    """


def pytest_omk_junit_properties(
    item: pytest.Item, result: dict[str, Any], properties: list[tuple[str, str]]
) -> None:
    """Add, change or remove the JUnit properties of a sample item before they are written.

    ``result`` is the sample's entry of the JSON report; ``properties`` is a list of
    ``(name, value)`` string pairs that may be edited in place.
    """
