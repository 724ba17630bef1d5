"""What ``--omk-changed`` knows of an app's code: part of every sample's input digest, and the
run header's line saying what that digest covers.

An app under test is the project's own code, so an edit to it must make its samples run again.
With ``--omk-app-digest`` the declared paths and versions are digested; without, the source file
of the app's module (the ``python:`` callable's, or the hook's app's), or for the ``omk_app``
fixture, whose value exists only once it is set up, the ``conftest.py`` that defines it. A
``command:`` app's sources cannot be known: the header says to declare them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_omk.config.settings import Settings
from pytest_omk.errors import ConfigError
from pytest_omk.plugin.answerer import FIXTURE, Answerer
from pytest_omk.plugin.compat import conftest_fixture

if TYPE_CHECKING:  # the executor's module imports pydantic: not for a run without sample files
    from pytest_omk.execute.base import Executor


def app_code_digest(config: pytest.Config, settings: Settings, executor: Executor) -> str | None:
    """The digest of the app's code for the samples' input digests (``None``: nothing to digest)."""
    from pytest_omk.app.digest import code_digest
    from pytest_omk.app.host import FixtureApp, app_target
    from pytest_omk.app.live import LiveApp

    declared = settings.app_digest
    app = executor.app if isinstance(executor, LiveApp) else None
    if app is None and not declared:
        return None
    fixture = conftest_fixture(config, FIXTURE) if isinstance(app, FixtureApp) else None
    try:
        found = code_digest(
            declared,
            rootdir=settings.rootdir,
            app=None if app is None else app_target(app),
            files=[fixture] if fixture else [],
        )
    except ConfigError as exc:
        raise pytest.UsageError(f"omk: {exc}") from None
    return None if found is None else found.sha256


def app_code_header(settings: Settings, answerer: Answerer) -> list[str]:
    """The header's line on what ``--omk-changed`` digests of an app (none without an app)."""
    if not settings.changed or not answerer.own_code:
        return []
    if settings.app_digest:
        return [f"omk: --omk-changed digests the app as {', '.join(settings.app_digest)}"]
    if answerer.source == "fixture":
        where = Path(answerer.fixture_at or "conftest.py").name
        return [f"omk: --omk-changed digests the app as {where}; add --omk-app-digest=SRC"]
    if answerer.source == "hook" or (answerer.spec or "").startswith("python:"):
        return ["omk: --omk-changed digests the app's module file (more: --omk-app-digest)"]
    return ["omk: --omk-changed cannot see this app's code: declare --omk-app-digest"]
