"""Hostile-input guards of the pytest layer: check caps at collection, secrets and control
characters out of what the terminal and JUnit show, and the notice of an unsandboxed agent.

See docs/security.md for the trust model these follow from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_omk.errors import ConfigError
from pytest_omk.recordings.scrub import sanitize_control

if TYPE_CHECKING:
    from pytest_omk.loading import SampleBundle
    from pytest_omk.recordings.scrub import Scrubber


def check_caps(file_name: str, bundle: SampleBundle, cap: int) -> None:
    """A sample with more assertions plus rubric dimensions than ``cap`` is a collection error."""
    for loaded in bundle.samples:
        sample = loaded.sample
        checks = len(sample.assertions or []) + len(sample.rubric or {})
        if checks > cap:
            raise ConfigError(
                f"{file_name}: sample {sanitize_control(sample.sample_id)!r} has {checks} assertions and "
                f"rubric dimensions; at most {cap} are allowed (each dimension is a paid judge call; "
                "raise the cap with --omk-max-checks or ini omk_max_checks)"
            )


def scrub_report(report: pytest.TestReport, scrubber: Scrubber) -> None:
    """Secrets and control characters out of what the terminal and JUnit show of ``report``."""
    longrepr = report.longrepr
    if longrepr is not None and not isinstance(longrepr, tuple):
        text = str(longrepr)
        clean = scrubber.terminal(text)
        if clean != text:
            report.longrepr = clean
    report.sections = [(scrubber.terminal(title), scrubber.terminal(body)) for title, body in report.sections]


def sandbox_notice(config: pytest.Config, session: pytest.Session, executor: str | None) -> None:
    """Say once (controller only) when the agent's Bash will run without bubblewrap, or as root
    without a process limit."""
    if hasattr(config, "workerinput") or not session.items or not (executor or "").startswith("agent"):
        return
    from pytest_omk.agent.sandbox import Sandbox

    reporter = config.pluginmanager.get_plugin("terminalreporter")
    notice = Sandbox.detect().notice
    if reporter is not None and notice is not None:
        reporter.write_line(f"omk: {notice}", yellow=True)
