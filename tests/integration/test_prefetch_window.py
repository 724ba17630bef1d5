"""An in-process run starts its samples' calls ahead of the run loop, but only a window ahead.

Starting every sample at once kept every result in memory until its item ran (a 10,000-sample
replay held all of them: half of its peak). The executor here notes, for each call, how far the
sample is ahead of the items pytest has begun to set up; the run never lets it exceed the window
(256 samples at concurrency 1), and still calls a window ahead while the run loop is held at its
first item.
"""

from __future__ import annotations

import json

import pytest

from pytest_omk.run.prefetch import window_size
from tests.support import OmkRun, sample, write_sample_set

SAMPLES = 600

LEAD_EXECUTOR = """
SETUPS = [0]
LEADS = []

def answer(request):
    index = int(request.sample.sample_id.split("-")[1])
    LEADS.append(index - SETUPS[0])
    return "ok"
"""

LEAD_CONFTEST = """
import json, pathlib, time
import pytest
import omk_lead_executor as lead

WINDOW = {window}

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    lead.SETUPS[0] += 1
    if lead.SETUPS[0] == 1:
        # Hold the run loop at its first item until a window's worth of calls is answered, then
        # give the call thread a moment more: without a window it would go on past it.
        deadline = time.monotonic() + 10
        while len(lead.LEADS) < WINDOW and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)

def pytest_sessionfinish(session):
    pathlib.Path("leads.json").write_text(json.dumps(lead.LEADS))
"""


@pytest.mark.multiprocess
def test_calls_run_ahead_of_the_run_loop_by_at_most_the_window(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    pytester.makepyfile(omk_lead_executor=LEAD_EXECUTOR)
    window = window_size(1)
    pytester.makeconftest(LEAD_CONFTEST.replace("{window}", str(window)))
    samples = [sample(f"s-{i:04d}", assertions=[{"type": "equals", "value": "ok"}]) for i in range(SAMPLES)]
    write_sample_set(pytester, *samples)
    result = omk_run(
        "--omk-executor=python:omk_lead_executor:answer",
        "--omk-concurrency=1",
        "-p",
        "no:randomly",
        subprocess=True,
    )
    result.assert_outcomes(passed=SAMPLES)
    leads = json.loads((pytester.path / "leads.json").read_text(encoding="utf-8"))
    assert len(leads) == SAMPLES  # every sample called once
    assert max(leads) <= window, (
        f"a call started {max(leads)} samples ahead of the run loop (window {window})"
    )
    assert max(leads) >= window // 2, "calls are no longer made ahead of the run loop"
