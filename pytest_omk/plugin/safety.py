"""Hostile-input guards of the pytest layer: check caps at collection, secrets and control
characters out of what the terminal and JUnit show, and the notice of an unsandboxed agent.

See docs/security.md for the trust model these follow from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk._util.visible import visible, workflow_inert
from pytest_omk.errors import ConfigError
from pytest_omk.plugin.compat import terminal_width
from pytest_omk.report.wrap import TableRow, wrap_line, wrap_lines

if TYPE_CHECKING:
    from pytest_omk.loading import SampleBundle
    from pytest_omk.recordings.scrub import Scrubber


masked_key = pytest.StashKey[Callable[[str], str]]()
"""The run's secret masking for text quoted into messages (``Scrubber.masked``): graders mask an
output whole before they cut an excerpt of it."""


def check_caps(file_name: str, bundle: SampleBundle, cap: int) -> None:
    """A sample with more assertions plus rubric dimensions than ``cap`` is a collection error."""
    for loaded in bundle.samples:
        sample = loaded.sample
        checks = len(sample.assertions or []) + len(sample.rubric or {})
        if checks > cap:
            raise ConfigError(
                f"{file_name}: sample {visible(sample.sample_id)!r} has {checks} assertions and "
                f"rubric dimensions; at most {cap} are allowed (each dimension is a paid judge call; "
                "raise the cap with --omk-max-checks or ini omk_max_checks)"
            )


def scrub_report(report: pytest.TestReport | pytest.CollectReport, scrubber: Scrubber) -> None:
    """Secrets out of, and unsafe characters made visible in, all a report shows: the failure text
    (every ``--tb`` style, the ``-r`` summary, JUnit's message), a skip's reason, an xfail's reason,
    captured sections and the JUnit properties."""
    clean = scrubber.terminal
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # a skip: (path, line, reason)
        path, line, reason = longrepr
        report.longrepr = (path, line, clean(reason))
    elif longrepr is not None:
        # A sample's ``--tb=line`` representation prints a crash line that ``str()`` leaves out: it is
        # made from shown text already (``SampleItem.repr_failure``).
        text = str(longrepr)
        cleaned = clean(text)
        if cleaned != text:
            report.longrepr = cleaned
    xfail_reason = getattr(report, "wasxfail", None)
    if isinstance(xfail_reason, str):
        report.wasxfail = clean(xfail_reason)  # type: ignore[union-attr]
    report.sections = [(clean(title), clean(body)) for title, body in report.sections]
    properties = getattr(report, "user_properties", None)
    # One pass over all the properties first: a sample has a score of them, and they are rarely unsafe.
    texts = "\n".join(
        f"{name}\n{value if isinstance(value, str) else ''}" for name, value in properties or ()
    )
    if properties and clean(texts) != texts:
        report.user_properties = [  # type: ignore[union-attr]
            (clean(str(name)), clean(value) if isinstance(value, str) else value)
            for name, value in properties
        ]


def omk_warning(message: str) -> pytest.PytestWarning:
    """A warning of the plugin for pytest's warnings summary, unsafe characters made visible (its
    text may name a committed recording, whose file name and content are hostile; none of its lines
    can act as a CI workflow command either: the warnings summary prints them as they are)."""
    return pytest.PytestWarning(f"omk: {workflow_inert(visible(message))}")


class ShownLines:
    """The terminal reporter's ``write_line``/``write_sep`` with every line passed through the
    run's ``shown`` (scrubbed, escaped, inert under CI): for sections that print foreign text (the
    ``omk scores`` table holds sample ids and servers' reasons), then wrapped to the terminal's
    width (:mod:`pytest_omk.report.wrap`; a table's rows are kept whole). Without ``shown`` it
    only wraps: for lines of the plugin's own text."""

    def __init__(self, reporter: Any, shown: Callable[[str], str] = str) -> None:
        self._reporter = reporter
        self._shown = shown
        self._width = terminal_width(reporter)

    def write_line(self, line: str, **markup: bool) -> None:
        """One line, shown safely, on as many terminal lines as it needs."""
        text = self._shown(line)
        for part in wrap_line(TableRow(text) if isinstance(line, TableRow) else text, self._width):
            self._reporter.write_line(part, **markup)

    def write_sep(self, sep: str, title: str, **markup: bool) -> None:
        """A separator line with a title, shown safely."""
        self._reporter.write_sep(sep, self._shown(title), **markup)


def header_lines(config: pytest.Config, lines: list[str]) -> list[str]:
    """Lines a ``pytest_report_header`` or ``pytest_report_collectionfinish`` hook returns, wrapped
    to the terminal's width as the summary's are (pytest writes them as they are)."""
    return wrap_lines(lines, terminal_width(config.pluginmanager.get_plugin("terminalreporter")))


def sandbox_notice(config: pytest.Config, session: pytest.Session, executor: str | None) -> None:
    """Say once (controller only) when the agent's Bash will run without bubblewrap, or as root
    without a process limit."""
    if hasattr(config, "workerinput") or not session.items or not (executor or "").startswith("agent"):
        return
    from pytest_omk.agent.sandbox import Sandbox

    reporter = config.pluginmanager.get_plugin("terminalreporter")
    notice = Sandbox.detect().notice
    if reporter is not None and notice is not None:
        ShownLines(reporter).write_line(f"omk: {notice}", yellow=True)
