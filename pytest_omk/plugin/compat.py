"""Every use of pytest's private API, and every workaround of a pytest bug, in one place, each with
why it is needed.

Checked against pytest 9.0.3 (the version the suite runs on; the declared lower bound is 9.0).
When pytest changes one of these, this module is the only one to adapt.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

CHECKED_PYTEST = "9.0.3"


def suspend_xfail_mark(item: pytest.Item) -> None:
    """Keep a tripwire item's ``xfail`` mark off its subtests.

    Otherwise every *passing* check of a tripwire sample would be reported as an unexpected pass.
    pytest re-evaluates the mark when the call phase ends, so the item itself is still judged as
    ``xfail`` (failed checks: xfailed; none failed: xpassed). Private: ``_pytest.skipping.xfailed_key``
    is the stash entry holding the evaluated mark; there is no public way to reset it.
    """
    from _pytest.skipping import xfailed_key

    item.stash[xfailed_key] = None


def junit_xml(config: pytest.Config) -> Any | None:
    """The ``--junitxml`` writer (``LogXML``), or ``None``: for suite-level ``<property>`` entries.

    Private: ``_pytest.junitxml.xml_key``; the public route (``record_testsuite_property``) is a
    fixture, so it needs a test function, and the suite properties are known only at the end.
    """
    from _pytest.junitxml import xml_key

    return config.stash.get(xml_key, None)


def terminal_writer(reporter: Any) -> Any:
    """The terminal reporter's ``TerminalWriter``, to redraw the status line in place and to know
    the terminal's width. Private: ``TerminalReporter._tw``; the public ``write``/``write_line``
    cannot erase what they wrote, nor say how wide the screen is."""
    return reporter._tw


def terminal_width(reporter: Any) -> int:
    """The terminal's width in columns (80 where the reporter has no writer)."""
    writer = getattr(reporter, "_tw", None)
    return int(getattr(writer, "fullwidth", 80))


def current_line(writer: Any) -> str:
    """What the writer has written on the current line so far. Private:
    ``TerminalWriter._current_line``, which pytest pads its progress (``[ 50%]``) by."""
    return str(writer._current_line)


def restore_current_line(writer: Any, line: str) -> None:
    """Give the writer back the line as it was before the status line's backspaces, so that pytest
    pads its progress by the width it wrote (private ``TerminalWriter._current_line``)."""
    writer._current_line = line


def fixture_info(item: pytest.Function) -> Any:
    """An item's computed fixture closure, to hand to its siblings (``Function(fixtureinfo=...)``).

    Private attribute ``_fixtureinfo``: every sample item of a file runs the same function, and
    computing its closure once per file instead of once per item matters for large files.
    """
    return item._fixtureinfo


def fixture_value(item: pytest.Function, name: str) -> Any:
    """The value of fixture ``name`` for ``item`` (set up now if it is not yet), as a test argument
    naming it would get it: the ``omk_app`` fixture that provides the app under test.

    Private: ``Function._request``, the item's own fixture request. Sample items name no fixture
    as an argument (see :func:`subtests_of`); the app is asked for once, by the first sample that
    runs, and pytest keeps it for its scope and tears it down with that scope.
    """
    return item._request.getfixturevalue(name)


def conftest_fixture(config: pytest.Config, name: str) -> Path | None:
    """The ``conftest.py`` among those loaded so far that defines a fixture ``name``, if any.

    Private: ``_pytest.fixtures.FixtureFunctionDefinition``, what ``@pytest.fixture`` makes of a
    function. pytest registers a conftest's fixtures only once its directory is collected, too
    late for the run's header; the loaded conftest modules are known from the start.
    """
    from _pytest.fixtures import FixtureFunctionDefinition

    for plugin in config.pluginmanager.get_plugins():
        file = getattr(plugin, "__file__", None)
        is_conftest = isinstance(file, str) and Path(file).name == "conftest.py"
        if is_conftest and isinstance(getattr(plugin, name, None), FixtureFunctionDefinition):
            return Path(str(file))
    return None


def keep_current_test_variable() -> Callable[[], None]:
    """Stop pytest from deleting ``PYTEST_CURRENT_TEST`` between tests; returns the undo.

    An app under test in this process runs on worker threads while pytest runs items, and its
    HTTP client reads the environment (httpx and requests look for proxy variables by iterating
    ``os.environ``). pytest deletes the variable after each test and adds it back at the next:
    an iteration meanwhile raised ``KeyError: 'PYTEST_CURRENT_TEST'`` inside the app
    (pytest-dev/pytest#10876). Kept in place, the variable only changes its value, which a
    concurrent iteration survives. Private: ``_pytest.runner._update_current_test_var``, looked up
    by pytest's runner hooks at each call.
    """
    import os

    import _pytest.runner as runner

    name = "PYTEST_CURRENT_TEST"
    original = runner._update_current_test_var
    before = os.environ.get(name)

    def update(item: pytest.Item, when: Any) -> None:
        if when is not None:
            original(item, when)

    os.environ.setdefault(name, "")
    runner._update_current_test_var = update

    def undo() -> None:
        runner._update_current_test_var = original
        if before is None:
            os.environ.pop(name, None)
        else:  # an outer run (pytester in process) had it set: as it was
            os.environ[name] = before

    return undo


class FullTraceback:
    """Mixin for items: show an unexpected error's whole traceback, not pytest's filtered one.

    Private hook ``Node._traceback_filter``: pytest cuts frames of the plugin's own code, which are
    exactly the frames a bug report about a sample item needs.
    """

    def _traceback_filter(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
        return excinfo.traceback


def line_repr(path: Path, line: int | None, message: str) -> Any:
    """A failure representation printed as one ``path:line: message`` line under ``--tb=line``.

    Private: ``_pytest._code.code.ReprExceptionInfo`` and its parts; ``repr_failure`` may return any
    ``TerminalRepr``, but pytest offers no public constructor for one with a crash location, which
    ``--tb=line`` prints (a plain string would print the item's location instead of the sample's).
    """
    from _pytest._code.code import ReprExceptionInfo, ReprFileLocation, ReprTraceback

    crash = ReprFileLocation(str(path), (line or 0) + 1, message)
    return ReprExceptionInfo(reprtraceback=ReprTraceback([], None, "line"), reprcrash=crash)


class _NoSubtestCapture:
    """Stands in for a capture fixture, so that pytest's subtests do not capture on their own.

    pytest's ``subtests.test`` opens a new capture for every subtest unless ``capsys``/``capfd``
    is active (``CaptureManager._capture_fixture`` set; checked on pytest 9.2). Under the default
    ``--capture=fd`` that is two temporary files and several ``dup2`` calls per check: 15-55 % of
    the CPU of a large replay, for checks that print nothing. Output printed meanwhile still lands
    in the item's own capture and is shown with its failure. Every method the capture manager
    calls on a fixture is a no-op here.
    """

    def __bool__(self) -> bool:
        return True

    def _is_started(self) -> bool:
        return False

    def _start(self) -> None: ...

    def _suspend(self) -> None: ...

    def _resume(self) -> None: ...

    def close(self) -> None: ...


@contextlib.contextmanager
def item_level_capture(config: pytest.Config) -> Iterator[None]:
    """While grading one item: its subtests share the item's capture instead of each opening one."""
    capman = config.pluginmanager.getplugin("capturemanager")
    if capman is None or getattr(capman, "_capture_fixture", object()) is not None:
        yield  # no capture manager, a changed one, or the test uses capsys/capfd: leave it be
        return
    capman._capture_fixture = _NoSubtestCapture()
    try:
        yield
    finally:
        capman._capture_fixture = None


def subtests_of(item: pytest.Function) -> pytest.Subtests:
    """The item's ``subtests`` fixture, requested only when a check did not pass.

    Private: ``Function._request``, the item's own fixture request. Sample items do not name the
    fixture as an argument: setting it up (and the ``request`` fixture) for every item was a
    twentieth of a large replay, and only failed or skipped checks use it.
    """
    subtests: pytest.Subtests = item._request.getfixturevalue("subtests")
    return subtests


def report_passed_subtests(item: pytest.Item, messages: Sequence[str]) -> None:
    """Report checks that passed, in order, as ``subtests.test(msg=...)`` would report them.

    A sample's checks are graded before any is reported, so a passing check's subtest body does
    nothing: what pytest's context manager adds per check (an exit stack, a log handler, a report
    built from the item, its JSON round trip, a capture suspension) changes nothing but time, and
    was most of the plugin's cost per check in a large replay. Here one report is built through
    ``pytest_runtest_makereport`` (so every plugin's hook still sees a passed call) and copied for
    each check, and the capture is suspended once for the batch. Failed and skipped checks still go
    through ``subtests.test``, which owns failure counting, ``--pdb`` and ``-x``.

    Private: ``_pytest.subtests.SubtestContext`` (the report's ``context``; its constructor is
    what ``subtests.test`` calls) and ``CaptureManager.global_and_fixture_disabled`` (what
    ``subtests.test`` suspends capture with around its report). Checked on pytest 9.2.
    """
    if not messages:
        return
    ihook = item.ihook
    call = pytest.CallInfo.from_call(lambda: None, when="call")
    base = ihook.pytest_runtest_makereport(item=item, call=call)
    capman = item.config.pluginmanager.getplugin("capturemanager")
    suspended = capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext()
    with suspended:
        for message in messages:
            report = pytest.SubtestReport.__new__(pytest.SubtestReport)
            report.__dict__.update(base.__dict__)
            # Lists other plugins may append to are each report's own, as after pytest's copy.
            report.sections = list(base.sections)
            report.user_properties = list(base.user_properties)
            report.context = _passed_context(message)
            ihook.pytest_runtest_logreport(report=report)


@functools.lru_cache(maxsize=1024)
def _passed_context(message: str) -> Any:
    """The ``context`` of a passing check's report, one per message: the check messages of a run
    repeat from sample to sample (``assertion 0: contains``), and the context is a frozen value
    (pytest's ``SubtestContext``, ``frozen=True, slots=True``), so the reports share it; a large
    replay kept one per check, a fifth of the objects the garbage collector traverses at exit."""
    from _pytest.subtests import SubtestContext

    return SubtestContext(msg=message, kwargs={})


def ini_keys(config: pytest.Config) -> set[str]:
    """The keys the ini file and ``-o`` set, known to pytest or not.

    Private: ``Config._inicfg``; ``getini`` answers only for registered keys, and the public
    ``Config.inicfg`` is deprecated (pytest 9.2). Checked on 9.0.2 and 9.2.
    """
    return set(getattr(config, "_inicfg", {}))


def setup_with_every_option(config: pytest.Config, args: Sequence[str]) -> tuple[Path, Path | None] | None:
    """The rootdir and ini file pytest would choose for ``args`` had it known every plugin's options.

    pytest picks them from its first parse of the command line, before plugins are loaded, so the
    value of a plugin option written with a space (``--omk-baseline /x/b.json``) is taken for a
    test path there. Private: ``Config._parser`` (by now it knows every option) and
    ``findpaths.determine_setup``, called as ``Config.parse`` calls it. ``None`` when the arguments
    do not parse (pytest reports that itself).
    """
    from _pytest.config.findpaths import determine_setup

    try:
        known = config._parser.parse_known_args(list(args))
        rootpath, inipath, _, _ = determine_setup(
            inifile=known.inifilename,
            override_ini=known.override_ini,
            args=[str(arg) for arg in known.file_or_dir],
            rootdir_cmd_arg=known.rootdir or None,
            invocation_dir=config.invocation_params.dir,
        )
    except (pytest.UsageError, OSError, ValueError):
        return None
    return rootpath, inipath
