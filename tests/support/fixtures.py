"""The fixtures plugin of the project's own tests (listed in the root ``conftest.py``).

- ``omk_run``: runs pytest in ``pytester`` with ``--omk-record-mode=off`` (unless the test gives a
  record mode), in process by default (:func:`tests.support.runner.run_pytest`).
- ``fake_command`` / ``fake_judge``: scriptable command executors (:mod:`tests.support.commands`).
- ``no_provider_env``: clears the provider variables so that nothing reaches a provider; the
  suites of end-to-end runs use it for every test (their ``conftest.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.commands import FakeCommand
from tests.support.runner import run_pytest

PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


@pytest.fixture
def no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No judge is auto-selected and nothing can reach a provider: these runs stay offline."""
    for name in (*PROVIDER_ENV, "OMK_FAKE_SCRIPT", "OMK_FAKE_LOG", "PYTEST_XDIST_AUTO_NUM_WORKERS", "CI"):
        monkeypatch.delenv(name, raising=False)


OmkRun = Callable[..., pytest.RunResult]


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's ``pytester`` with pytest-randomly off in the runs it makes, as it is in this suite
    (``-p no:randomly`` in the addopts): a test that wants it says ``-p randomly`` on its command
    line. pytester clears ``PYTEST_ADDOPTS`` as it starts; the runs then read this one."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:randomly")
    return pytester


@pytest.fixture
def omk_run(pytester: pytest.Pytester) -> OmkRun:
    """``omk_run(*args, subprocess=False, record_mode="off", ci=None, keep_ctrl_c=False)``:
    :func:`run_pytest` in the pytester dir, recordings off unless the test gives a record mode."""

    def run(
        *args: str | Path,
        subprocess: bool = False,
        record_mode: str | None = "off",
        ci: bool | None = None,
        keep_ctrl_c: bool = False,
    ) -> pytest.RunResult:
        return run_pytest(
            pytester, *args, subprocess=subprocess, record_mode=record_mode, ci=ci, keep_ctrl_c=keep_ctrl_c
        )

    return run


@pytest.fixture
def fake_command(tmp_path_factory: pytest.TempPathFactory) -> FakeCommand:
    """A scriptable command executor (outside the pytester dir so it is never collected)."""
    return FakeCommand(tmp_path_factory.mktemp("omk-command"))


@pytest.fixture
def fake_judge(tmp_path_factory: pytest.TempPathFactory) -> FakeCommand:
    """A second scriptable command, for ``--omk-judge`` (answer with ``judge_reply``)."""
    return FakeCommand(tmp_path_factory.mktemp("omk-judge"))
