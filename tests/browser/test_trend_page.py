"""The trend page of ``render --history`` in a real browser: it loads nothing, logs no error (a
style its policy blocked would be one), draws its sparklines, and a hostile sample id stays text."""

from __future__ import annotations

import pytest
from websockets.sync.client import ClientConnection

from tests.browser.reports import open_report
from tests.support import FakeCommand, OmkRun, executor_arg, omk_command, sample, write_sample_set
from tests.support.clock import start_runs_at

HOSTILE = "<img src=x onerror=alert(1)>"
DAY, START = 86_400, 1_796_000_000


def test_the_trend_page_renders_under_its_policy(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    fake_command: FakeCommand,
    browser: ClientConnection,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check = [{"type": "contains", "value": "good"}]
    write_sample_set(
        pytester, *(sample(name, "p", assertions=check) for name in ("steady", "breaks", HOSTILE))
    )
    for run in (1, 2, 3):
        start_runs_at(monkeypatch, START + run * DAY)
        answers = {"steady": "good", HOSTILE: "good", "breaks": "bad" if run == 3 else "good"}
        omk_run(executor_arg(fake_command.script(answers)), f"--omk-report=r{run}.json")
    done = omk_command(
        pytester.path, "render", "--history", "r3.json", "r1.json", "r2.json", "--html", "trend.html"
    )
    assert done.returncode == 0, done.stderr
    page = open_report(browser, pytester.path / "trend.html")
    states = page.evaluate("[...document.querySelectorAll('tr.trend-sample')].map(r => r.dataset.state)")
    assert states == ["newly failing", "stable", "stable"]
    widths = page.evaluate(
        "[...document.querySelectorAll('svg.strip, svg.spark')].map(s => s.getBoundingClientRect().width)"
    )
    assert len(widths) == 6 and all(width > 0 for width in widths)
    # The stylesheet applied (its hash is in the policy): a newly failing state is red.
    color = page.evaluate("getComputedStyle(document.querySelector('.state.newly-failing')).color")
    assert color == "rgb(198, 40, 40)"
    assert page.evaluate("document.querySelectorAll('img, script').length") == 0
    assert HOSTILE in page.evaluate("document.querySelector('#trend-samples').textContent")
