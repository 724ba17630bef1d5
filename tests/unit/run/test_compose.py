"""The composition root: plain objects in (settings and what the runner knows), the call path out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_omk.config.settings import Settings
from pytest_omk.errors import ConfigError
from pytest_omk.run.answerer import Answerer
from pytest_omk.run.compose import CallPath, RunnerSide
from pytest_omk.run.model_under_test import AppSide


class Stopped(Exception):
    """What the test's runner raises for a usage error."""


class Runner:
    """A stand-in for the pytest layer: records what the call path tells it."""

    def __init__(self, tmp_path: Path, answerer: Answerer, *, workers: int | None = None) -> None:
        self.warnings: list[str] = []
        self.settled: list[Answerer] = []
        self.answerer = answerer
        self.hook_result: Any = None
        self.side = RunnerSide(
            warn=self.warnings.append,
            usage_error=lambda message: Stopped(f"omk: {message}"),
            workers=workers,
            budget_limits=None,
            recordings_dir=lambda: tmp_path / "recordings",
            started_ns=lambda: 1,
            app=AppSide(
                choose=lambda: self.answerer,
                from_hook=lambda: self.hook_result,
                keep_environment=lambda: lambda: None,
                digest_option=lambda: "--omk-app-digest",
                settled=self.settled.append,
            ),
        )


def _settings(tmp_path: Path, **values: Any) -> Settings:
    return Settings(rootdir=tmp_path, record_mode="all", **values)


def test_an_echo_run_builds_the_executor_and_its_stages_without_a_judge(tmp_path: Path) -> None:
    runner = Runner(tmp_path, Answerer("command line", spec="echo"))
    calls = CallPath(_settings(tmp_path, executor="echo", concurrency=6), runner.side)
    assert calls.executor is not None and calls.executor.id == "echo"
    stages = calls.stages()
    assert stages.executor is calls.executor
    assert stages.judge is None
    assert stages.calls.limiter.limit == 6  # the controller keeps the whole concurrency
    assert stages.calls.store is calls.store
    assert calls.executors() == [calls.executor]
    assert runner.settled == [Answerer("command line", spec="echo")] * 2  # chosen, then built
    assert runner.warnings == []


def test_an_xdist_worker_takes_its_share_of_the_concurrency_and_the_budget(tmp_path: Path) -> None:
    runner = Runner(tmp_path, Answerer("command line", spec="echo"), workers=4)
    settings = _settings(tmp_path, executor="echo", concurrency=8, budget_usd=2.0)
    calls = CallPath(settings, runner.side)
    assert calls.stages().calls.limiter.limit == 2
    assert calls.budget is not None
    assert calls.budget.limits.usd == pytest.approx(0.5)


def test_no_budget_is_made_without_a_cap(tmp_path: Path) -> None:
    calls = CallPath(_settings(tmp_path, executor="echo"), Runner(tmp_path, Answerer(None)).side)
    assert calls.budget is None
    assert calls.executor is None  # nothing answers: nothing is built


def test_a_judge_that_is_the_model_under_test_is_a_warning_on_the_controller_only(tmp_path: Path) -> None:
    values = {"executor": "openai", "judge": "openai", "model": "m", "judge_model": "m"}
    controller = Runner(tmp_path, Answerer("command line", spec="openai"))
    CallPath(_settings(tmp_path, **values), controller.side)
    assert len(controller.warnings) == 1 and "the judge is the model under test" in controller.warnings[0]
    worker = Runner(tmp_path, Answerer("command line", spec="openai"), workers=2)
    CallPath(_settings(tmp_path, **values), worker.side)
    assert worker.warnings == []


def test_a_misspelt_judge_is_the_runners_usage_error_at_once(tmp_path: Path) -> None:
    runner = Runner(tmp_path, Answerer("command line", spec="echo"))
    with pytest.raises(Stopped, match=r"^omk: .*--omk-judge"):
        CallPath(_settings(tmp_path, executor="echo", judge="opena"), runner.side)


def test_an_executor_that_cannot_be_built_names_where_it_was_given(tmp_path: Path) -> None:
    runner = Runner(tmp_path, Answerer("ini", spec="python:no_such_module_here:f"))
    calls = CallPath(_settings(tmp_path, executor="python:no_such_module_here:f"), runner.side)
    with pytest.raises(Stopped, match=r"^omk: ini key omk_executor python:no_such_module_here:f: "):
        calls.executor  # noqa: B018 (built on first use)


def test_a_hook_that_returns_nothing_falls_back_to_the_ini_executor(tmp_path: Path) -> None:
    runner = Runner(tmp_path, Answerer("hook", ini_spec="echo", hook_at="conftest.py"))
    calls = CallPath(_settings(tmp_path, executor="echo"), runner.side)
    assert calls.executor is not None and calls.executor.id == "echo"
    assert runner.settled[-1].source == "ini" and runner.settled[-1].spec == "echo"


def test_the_fixture_app_waits_until_it_is_bound(tmp_path: Path) -> None:
    runner = Runner(tmp_path, Answerer("fixture", fixture_at="conftest.py"))
    calls = CallPath(_settings(tmp_path), runner.side)
    waits: list[bool] = []
    try:
        assert calls.executor is not None
        waits.append(calls.model.waits_for_fixture)
        with pytest.raises(ConfigError, match="neither an executor nor a callable"):
            calls.model.bind_fixture(42)
        waits.append(calls.model.waits_for_fixture)
        calls.model.bind_fixture(lambda request: "answer")
        waits.append(calls.model.waits_for_fixture)
        assert calls.model.app is not None  # the app's gateway is up
    finally:
        calls.close_app()
    assert waits == [True, True, False]
    assert calls.model.app is None
