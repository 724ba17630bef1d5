"""The live status line while model calls run: rewritten in place on a terminal (a pseudo-terminal
here), plain lines on a pipe, nothing under ``-q``. Counts lines and events, never times."""

from __future__ import annotations

import os

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import sample, write_sample_set
from tests.support.terminals import run_on_pipe, run_on_pty

pytestmark = pytest.mark.multiprocess  # every test here runs a child pytest on a pipe or a pty

LATENCY = 1.5
"""Each call takes this long, far above the status interval below, so lines are certain to appear."""

HEADER = ("omk: executor ", "omk: the app ")
"""The run header's lines (who answers), printed once before the run: not status lines."""


@pytest.fixture
def slow_project(pytester: pytest.Pytester, fake_llm: FakeLLM) -> dict[str, str]:
    fake_llm.latency = LATENCY
    write_sample_set(pytester, sample("s1", "Say one"), sample("s2", "Say two"))
    pytester.makeini("[pytest]\nomk_status_interval = 0.2\n")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "PYTEST_", "CI"))
    }
    return {
        **env,
        "OPENAI_BASE_URL": fake_llm.openai_base_url,
        "OPENAI_API_KEY": "sk-status-line-4d5e6f70",
        "COLUMNS": "120",
    }


def test_on_a_terminal_the_status_is_rewritten_in_place_and_erased(
    pytester: pytest.Pytester, slow_project: dict[str, str]
) -> None:
    out = run_on_pty(pytester.path, slow_project)
    assert "2 passed" in out
    drawn = out.count("omk: 0/2 samples") + out.count("omk: 1/2 samples")
    assert drawn >= 2  # redrawn, not printed once
    assert "1 in flight" in out
    # Every drawing is erased again (backspaces), and none starts a new line of its own.
    assert out.count("\b") >= 2 * len(" omk: 0/2 samples")
    assert not any(
        line.lstrip().startswith("omk: ") and not line.lstrip().startswith(HEADER)
        for line in out.replace("\r", "").split("\n")
    )
    assert "eval-samples.json ..  " not in out  # pytest's own progress line is intact
    assert "eval-samples.json" in out


def test_on_a_pipe_plain_lines_appear_and_quiet_has_none(
    pytester: pytest.Pytester, slow_project: dict[str, str]
) -> None:
    out = run_on_pipe(pytester.path, slow_project)
    assert "2 passed" in out
    lines = [line for line in out.splitlines() if line.startswith("omk: ") and not line.startswith(HEADER)]
    assert len(lines) >= 2
    assert all(" samples · " in line and " in flight · " in line and "ETA" in line for line in lines)
    assert "\b" not in out
    quiet = run_on_pipe(pytester.path, slow_project, "-q")
    assert "2 passed" in quiet
    assert not [line for line in quiet.splitlines() if line.startswith("omk: ")]
