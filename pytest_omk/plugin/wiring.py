"""The pytest side of the composition root (:mod:`pytest_omk.run.compose`): what only pytest knows.

The call path (executor, judge, app host, URL resolver, recordings store) is made in ``run/``;
this module hands it the warning sink, the usage error, an xdist worker's share, the recordings
directory, the run's start and who answers (the ``omk_app`` fixture's app is set up through the
first sample that runs: :mod:`pytest_omk.plugin.fixture_app`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_omk.config.settings import Settings
from pytest_omk.plugin.answerer import Answerer, answerer_key, choose
from pytest_omk.plugin.compat import keep_current_test_variable
from pytest_omk.plugin.recordings import run_started_ns
from pytest_omk.plugin.safety import omk_warning
from pytest_omk.run.compose import CallPath, RunnerSide
from pytest_omk.run.model_under_test import AppSide

if TYPE_CHECKING:
    from pytest_omk.execute.budget import BudgetLimits


def call_path(config: pytest.Config, settings: Settings) -> CallPath:
    """This process's call path, built lazily from ``settings`` and what pytest knows."""
    workerinput = getattr(config, "workerinput", None)

    def warn(message: str) -> None:
        config.issue_config_time_warning(omk_warning(message), stacklevel=2)

    def settled(answerer: Answerer) -> None:
        config.stash[answerer_key] = answerer  # the run header and the reports read it

    app = AppSide(
        choose=lambda: choose(config),
        from_hook=lambda: config.hook.pytest_omk_make_executor(config=config),
        keep_environment=keep_current_test_variable,
        digest_option=lambda: (
            "--omk-app-digest" if config.getoption("omk_app_digest", None) else "omk_app_digest"
        ),
        settled=settled,
    )
    side = RunnerSide(
        warn=warn,
        usage_error=lambda message: pytest.UsageError(f"omk: {message}"),
        workers=None if workerinput is None else int(workerinput.get("workercount", 1)),
        budget_limits=lambda: _shard_limits(config, settings),
        recordings_dir=lambda: recordings_dir(config, settings),
        started_ns=lambda: run_started_ns(config),
        app=app,
    )
    return CallPath(settings, side)


def _shard_limits(config: pytest.Config, settings: Settings) -> BudgetLimits:
    """A shard's part of the caps (weighted); imported when a budget is built, as before."""
    from pytest_omk.plugin.shard_cut import shard_limits

    return shard_limits(config, settings)


def recordings_dir(config: pytest.Config, settings: Settings) -> Path | None:
    """Where this run's recordings live (``None`` with ``--omk-record-mode=off`` or no cache)."""
    if settings.record_mode == "off":
        return None
    if settings.recordings:
        return (settings.rootdir / settings.recordings).resolve()
    cache = getattr(config, "cache", None)
    if cache is None:
        return None
    return Path(cache.mkdir("omk")) / "recordings"
