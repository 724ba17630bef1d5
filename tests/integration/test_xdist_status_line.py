"""The live status line under pytest-xdist: the workers make the calls and print nothing, the
controller prints one line with their counts added up, on a pipe and on a pseudo-terminal.

Counts lines and events, never times: the fake server holds every request until all four have
arrived (so all four calls are in flight at once, two per worker), then answers each after a delay
far above the status interval, so that lines are certain to be drawn while they are in flight.
"""

from __future__ import annotations

import os
import re

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import sample, write_sample_set
from tests.support.terminals import run_on_pipe, run_on_pty

pytestmark = pytest.mark.multiprocess  # every test here runs a child pytest on a pipe or a pty

pytest.importorskip("xdist")

SAMPLES = 4
LATENCY = 2.0
XDIST = ["-n", "2", f"--omk-concurrency={SAMPLES}"]
LINE = re.compile(
    r"omk: (\d+)/(\d+) samples · (\d+) in flight · (\d+) retrying · (\d+) failed · \S+ · \S+ · ETA \S+"
)

HEADER = ("omk: executor ", "omk: the app ")
"""The run header's lines (who answers), printed once before the run: not status lines."""


@pytest.fixture
def slow_project(
    pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    fake_llm.latency = LATENCY
    fake_llm.gate(SAMPLES, timeout=60)
    write_sample_set(pytester, *(sample(f"s{i}", f"Say {i}") for i in range(SAMPLES)))
    pytester.makeini("[pytest]\nomk_status_interval = 0.2\n")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "PYTEST_", "CI"))
    }
    return {
        **env,
        "OPENAI_BASE_URL": fake_llm.openai_base_url,
        "OPENAI_API_KEY": "sk-xdist-status-7a8b9c0d",
        "COLUMNS": "160",
    }


def counts(out: str) -> list[tuple[int, ...]]:
    """(done, total, in flight, retrying, failed) of every status drawn in ``out``."""
    return [tuple(int(g) for g in m.groups()) for m in LINE.finditer(out)]


@pytest.mark.floor("pytest-xdist")
def test_on_a_pipe_the_controller_prints_the_workers_counts_added_up(
    pytester: pytest.Pytester, slow_project: dict[str, str], fake_llm: FakeLLM
) -> None:
    out = run_on_pipe(pytester.path, slow_project, *XDIST)
    assert f"{SAMPLES} passed" in out
    assert len(fake_llm.requests) == SAMPLES  # each call made once, by a worker
    lines = [line for line in out.splitlines() if line.startswith("omk: ") and not line.startswith(HEADER)]
    drawn = counts("\n".join(lines))
    assert len(drawn) == len(lines) >= 2  # plain lines, each a whole status
    # The four calls in flight at once were in two workers: only the sum says four.
    assert (0, SAMPLES, SAMPLES, 0, 0) in drawn
    assert all(total <= SAMPLES and done <= total for done, total, *_ in drawn)
    assert "\b" not in out


def test_quiet_under_xdist_prints_no_status(pytester: pytest.Pytester, slow_project: dict[str, str]) -> None:
    quiet = run_on_pipe(pytester.path, slow_project, *XDIST, "-q")
    assert f"{SAMPLES} passed" in quiet
    assert "omk: " not in quiet


@pytest.mark.floor("pytest", "pytest-xdist")
def test_on_a_terminal_the_controller_rewrites_one_line(
    pytester: pytest.Pytester, slow_project: dict[str, str]
) -> None:
    out = run_on_pty(pytester.path, slow_project, *XDIST)
    assert f"{SAMPLES} passed" in out
    drawn = counts(out)
    assert len(drawn) >= 2  # redrawn, not printed once
    assert (0, SAMPLES, SAMPLES, 0, 0) in drawn
    # Every drawing is erased again with backspaces: what stays on the screen is pytest's output.
    assert out.count("\b") >= 2 * len("omk: 0/4 samples")
    lines = screen(out)
    assert not [line for line in lines if "omk:" in line and not line.startswith(HEADER)]
    assert any(line.startswith("." * SAMPLES) and line.endswith("[100%]") for line in lines)


def screen(out: str) -> list[str]:
    """The lines a terminal shows after ``out`` (backspace and carriage return move the cursor)."""
    shown: list[str] = []
    for raw in out.split("\n"):
        cells: list[str] = []
        cursor = 0
        for char in raw:
            if char == "\b":
                cursor = max(0, cursor - 1)
            elif char == "\r":
                cursor = 0
            else:
                cells[cursor : cursor + 1] = [char]
                cursor += 1
        shown.append("".join(cells).rstrip())
    return shown
