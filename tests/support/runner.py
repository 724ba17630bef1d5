"""The one way the project's tests run pytest on a pytester project: in process or as a child.

Every test that runs pytest on a project it wrote goes through :func:`run_pytest` (or the
``omk_run`` fixture, which adds ``--omk-record-mode=off``), so the switches such runs need are
spelt once: the third-party plugins a nested run does not need, the assert-rewrite warning of an
in-process run, the record mode, and whether the run sees ``CI``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

QUIET_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:anyio", "-p", "no:randomly")
"""Plugins a nested pytest run does not need (hypothesis alone costs about a second per start;
pytest-randomly, installed for the sharding tests, would reorder and reseed the run: a test that
wants it passes ``-p randomly``, which comes later on the command line and wins)."""
IN_PROCESS_WARNINGS = ("-W", "ignore::pytest.PytestAssertRewriteWarning")
"""pytest_omk is already imported by the outer session, so a run in process cannot rewrite it."""


def printed(result: pytest.RunResult, capfd: pytest.CaptureFixture[str] | None = None) -> str:
    """Everything a run in this process printed: pytest's stdout and stderr and, with ``capfd``
    (read now), what reached the file descriptors 1 and 2 themselves (xdist workers, a child
    command's inherited stderr, C code), which a child pytest's pipes would have held. A claim
    about what a run prints needs no child pytest (about a CPU-second each) for that."""
    text = result.stdout.str() + result.stderr.str()
    if capfd is not None:
        held = capfd.readouterr()
        text += held.out + held.err
    return text


def run_pytest(
    pytester: pytest.Pytester,
    *args: str | Path,
    subprocess: bool = False,
    record_mode: str | None = None,
    ci: bool | None = None,
    keep_ctrl_c: bool = False,
) -> pytest.RunResult:
    """pytest on ``pytester``'s project with ``args``.

    ``subprocess``: in a child process (a fresh interpreter: xdist workers, signals, imports)
    rather than in this one. ``keep_ctrl_c``: a ``KeyboardInterrupt`` inside a run in process ends
    that run only (pytester re-raises it into this session otherwise). ``record_mode``: add ``--omk-record-mode=<mode>`` unless ``args`` give
    one (``None``: the plugin's default applies). ``ci``: ``True`` runs with ``CI=true``, ``False``
    without ``CI``, ``None`` with the environment as it is.
    """
    argv = [str(a) for a in args]
    if record_mode is not None and not any(a.startswith("--omk-record-mode") for a in argv):
        argv.insert(0, f"--omk-record-mode={record_mode}")
    argv[:0] = QUIET_PLUGINS
    with pytest.MonkeyPatch.context() as env:
        if ci is True:
            env.setenv("CI", "true")
        elif ci is False:
            env.delenv("CI", raising=False)
        if subprocess:
            return pytester.runpytest_subprocess(*argv)
        return pytester.runpytest_inprocess(*IN_PROCESS_WARNINGS, *argv, no_reraise_ctrlc=keep_ctrl_c)
