"""The pytest entry point (``-p omk``): options, hooks and collection of eval-samples files."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.config.settings import Settings
from pytest_omk.plugin import hookspecs
from pytest_omk.plugin.answerer import answerer_key
from pytest_omk.plugin.auto_repeat import attach as attach_auto_repeat
from pytest_omk.plugin.collection import NO_EXECUTOR
from pytest_omk.plugin.collector import RecordCollector, record_collector_key
from pytest_omk.plugin.config_checks import check_command_line, check_ini_keys, check_system_prompt
from pytest_omk.plugin.discovery import collect_file
from pytest_omk.plugin.gold_options import add_gold_options, gold_ini_names, gold_value_flags, register_gold
from pytest_omk.plugin.item_setup import register_item_setup
from pytest_omk.plugin.nodes import SampleItem, SplitDirectory, release_collected, sample_host_key, shown_key
from pytest_omk.plugin.options import add_options, ini_names, settings_from_config, value_flags
from pytest_omk.plugin.otel import register as register_otel
from pytest_omk.plugin.recordings import RecordingsPlugin
from pytest_omk.plugin.run_info import RunInfo
from pytest_omk.plugin.safety import header_lines, masked_key
from pytest_omk.plugin.session import OmkSession
from pytest_omk.plugin.tracebacks import drop_lineless_entries
from pytest_omk.plugin.xdist.prefetch import DeepQueues
from pytest_omk.plugin.xdist.status import register as register_xdist_status

explicit_files_key = pytest.StashKey[set[Path]]()
explicit_dirs_key = pytest.StashKey[set[Path]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the plugin's options (``--omk-*`` and their ini keys)."""
    add_options(parser)
    add_gold_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register the plugin's hooks (``pytest_omk_make_executor`` ...)."""
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    """Read the options, make the run's session and, on the controller, the record collector."""
    config.addinivalue_line("markers", "omk: an item generated from an omk eval sample")
    config.addinivalue_line("markers", "omk_difficulty(level): the sample's difficulty (easy, medium, hard)")
    config.addinivalue_line("markers", "omk_capability(name): a capability the sample covers")
    config.pluginmanager.register(RecordingsPlugin(config), "omk-recordings")
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(RunInfo(), "omk-run-info")
    settings = _checked_settings(config)
    session = OmkSession(config, settings)
    config.stash[sample_host_key] = session
    config.stash[shown_key] = lambda text: session.calls.scrubber.terminal(text)
    config.stash[masked_key] = lambda text: session.calls.scrubber.masked(text)
    config.pluginmanager.register(session, "omk-session")
    config.pluginmanager.register(session.collection, "omk-collection")
    _register_sharding(config, session)
    config.pluginmanager.register(session.usage_errors, "omk-usage-errors")
    register_item_setup(config, session)
    attach_auto_repeat(session.launcher, settings, lambda: session.js)
    register_xdist_status(config, session.calls.progress, settings.status_interval)
    _register_reporting(config, session)
    _register_outcome_features(config, session)
    # pytest-html is loaded whenever it is installed; only a run writing its page (``--html``)
    # needs the columns and extras, which otherwise cost an HTML rendering per sample.
    if (
        config.pluginmanager.hasplugin("html")
        and config.getoption("htmlpath", None)
        and not hasattr(config, "workerinput")
    ):
        from pytest_omk.plugin.pytest_html import PytestHtmlColumns

        config.pluginmanager.register(PytestHtmlColumns(lambda: session.calls.scrubber), "omk-pytest-html")
    if (
        not hasattr(config, "workerinput")
        # Only a run writing JUnit XML needs it (its module imports the record models).
        and config.getoption("xmlpath", None)
        and junit_layout(config, session.settings.junit_properties) == "suite"
    ):
        from pytest_omk.plugin.junit import SuiteLevelProperties

        config.pluginmanager.register(SuiteLevelProperties(config), "omk-junit-suite-properties")
    _register_explicit_samples(config, session)
    register_gold(config, settings)


def _register_outcome_features(config: pytest.Config, session: OmkSession) -> None:
    """``--omk-known-failures`` (outcomes against the baseline) and ``--omk-otel`` (the trace)."""
    settings = session.settings
    if settings.known_failures == "xfail" and settings.baseline:
        from pytest_omk.plugin.known_failures import KnownFailures

        config.pluginmanager.register(KnownFailures(config, settings.baseline), "omk-known-failures")
    register_otel(config, settings, lambda: session.calls.scrubber)
    from pytest_omk.plugin.not_run import NotRunCount

    config.pluginmanager.register(NotRunCount(), "omk-not-run")


def _register_sharding(config: pytest.Config, session: OmkSession) -> None:
    """Where ``--omk-shard`` cuts, and the ``--omk-store-durations`` book (see docs/scaling.md)."""
    config.pluginmanager.register(session.collection.shard_cut, "omk-shard-cut")
    if session.settings.store_durations:
        from pytest_omk.plugin.durations_book import DurationsBook

        book = DurationsBook(config, Path(session.settings.store_durations))
        book.listen(session.launcher)
        config.pluginmanager.register(book, "omk-durations")


def _register_reporting(config: pytest.Config, session: OmkSession) -> None:
    """The controller's record collector and its spending book; a worker's budget ledger."""
    # The budget is built on first use, after collection: a shard's part of the caps needs its cut.
    calls, settings = session.calls, session.settings
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(DeepQueues(settings.concurrency), "omk-xdist-queues")
        # One feature, one plugin object: the records are gathered and published by the controller.
        from pytest_omk.plugin.not_graded import CutCalls
        from pytest_omk.plugin.summary_parts import SummaryParts

        parts = SummaryParts(
            settings,
            lambda: calls.budget.refused if calls.budget is not None else 0,
            lambda: tuple(session.launcher.logs.values()),  # samples started, never run
        )
        config.pluginmanager.register(parts, "omk-summary-parts")
        config.pluginmanager.register(CutCalls(lambda: session.launcher.cut_calls), "omk-cut-calls")
        collector = RecordCollector(config, settings, parts)
        config.stash[record_collector_key] = collector
        config.pluginmanager.register(collector, "omk-records")
    elif settings.budget_usd is not None or settings.budget_tokens is not None:
        from pytest_omk.plugin.budget import WorkerRefusals

        config.pluginmanager.register(WorkerRefusals(config, lambda: calls.budget), "omk-worker-refusals")
    if hasattr(config, "workerinput"):  # the calls of samples it never ran, for the controller
        from pytest_omk.plugin.not_graded import WorkerNotGraded

        launcher = session.launcher
        untaken = WorkerNotGraded(config, lambda: tuple(launcher.logs.values()), lambda: launcher.cut_calls)
        config.pluginmanager.register(untaken, "omk-worker-not-graded")


def _checked_settings(config: pytest.Config) -> Settings:
    """The run's options, checked as pytest configures: a usage error stops the run before any
    file is collected or any xdist worker started (see pytest_omk.plugin.config_checks)."""
    check_command_line(config, (*value_flags(), *gold_value_flags()))
    check_ini_keys(config, (*ini_names(), *gold_ini_names()))
    settings = settings_from_config(config)
    check_system_prompt(config, settings)
    return settings


def junit_layout(config: pytest.Config, chosen: str) -> str:
    """Where per-sample JUnit properties go: as chosen, or for ``auto`` where the ``junit_family``'s
    schema allows them (xunit2's has no ``<properties>`` in a ``<testcase>``; xunit1 and legacy do)."""
    if chosen != "auto":
        return chosen
    return "suite" if config.getini("junit_family") == "xunit2" else "testcase"


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Who answers the samples and why (``omk: executor ...``), what is live for an app, and a
    line when ``CI`` set the ini file's record mode aside."""
    host = config.stash.get(sample_host_key, None)
    note = [host.settings.record_mode_note] if host is not None and host.settings.record_mode_note else []
    answerer = config.stash.get(answerer_key, None)
    if answerer is None or host is None:
        return header_lines(config, note)
    from pytest_omk.plugin.app_code import app_code_header

    lines = answerer.header(host.settings.record_mode, host.settings.app_record)
    return header_lines(config, [*note, *lines, *app_code_header(host.settings, answerer)])


def _register_explicit_samples(config: pytest.Config, session: OmkSession) -> None:
    """``--omk-samples`` paths join the run; with no positional args they are the whole run.

    The ini key ``omk_samples`` composes like ``testpaths`` instead: its paths join what pytest
    collects by default, and positional arguments narrow the run as they do for any test file
    (a listed file named on the command line is still collected as a sample file).
    """
    files: set[Path] = set()
    dirs: set[Path] = set()
    cli = config.getoption("omk_samples") or []
    base_cli = Path(config.invocation_params.dir)
    paths = (
        [base_cli / p for p in cli] if cli else [Path(config.rootpath) / p for p in session.settings.samples]
    )
    explicit_args = config.args_source == pytest.Config.ArgsSource.ARGS
    for path in paths:
        path = path.resolve()
        if path.is_dir():
            dirs.add(path)
        elif path.is_file():
            files.add(path)
        else:
            raise pytest.UsageError(f"omk: --omk-samples {path}: no such file or directory")
    config.stash[explicit_files_key] = files
    config.stash[explicit_dirs_key] = dirs
    if not paths or (not cli and explicit_args):
        return
    if session.calls.model.answerer.source is None:  # nothing is built (or imported) for this check
        option = "--omk-samples" if cli else "omk_samples"
        raise pytest.UsageError(f"omk: {option} given but {NO_EXECUTOR}")
    extra = [str(p) for p in sorted(files | dirs)]
    if cli:
        config.args = [*config.args, *extra] if explicit_args else extra
    else:
        config.args = [*config.args, *extra]  # beside testpaths (or the current directory)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    # Last, after the session's own checks of the collected files.
    release_collected(session.items)


@pytest.hookimpl(tryfirst=True)
def pytest_keyboard_interrupt(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    # Before the terminal reporter renders the interruption (see pytest_omk.plugin.tracebacks).
    drop_lineless_entries(excinfo.value)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    # Around every implementation, so that a rerun plugin's further attempts are over too.
    try:
        return (yield)
    finally:
        if isinstance(item, SampleItem):
            item.release()


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> Any:
    """A split directory named by ``--omk-samples`` is one collector."""
    if path.resolve() in parent.config.stash.get(explicit_dirs_key, set()):
        return SplitDirectory.from_parent(parent, path=path)
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    """Sample files: the canonical names where pytest walks, and those ``--omk-samples`` names."""
    config = parent.config
    return collect_file(
        file_path,
        parent,
        config.stash.get(explicit_files_key, set()),
        config.stash.get(explicit_dirs_key, set()),
    )
