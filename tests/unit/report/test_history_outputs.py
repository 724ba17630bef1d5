"""The trend's Markdown (held to a pull-request comment's size) and HTML (self-contained, escaped)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from pytest_omk.compare.history import History
from pytest_omk.compare.history_trend import build_trend
from pytest_omk.models.history import HistorySample, TrendDocument
from pytest_omk.report.history_markdown import PR_COMMENT_LIMIT, render_trend_markdown, size
from pytest_omk.report.html.trend import render_trend_html


def _trend(failing: int, stable: int, name: str = "sample") -> TrendDocument:
    history = History()
    for day, outcome in enumerate(("passed", "failed"), start=1):
        rows = [
            {"nodeid": f"f.json::{name}-{i:05d}", "outcome": outcome, "scores": {"composite": 3.0}}
            for i in range(failing)
        ]
        rows += [{"nodeid": f"f.json::ok-{i:05d}", "outcome": "passed"} for i in range(stable)]
        started = datetime(2026, 1, day, tzinfo=UTC) + timedelta(hours=day)
        history.add_run(path=f"r{day}.json", started=started, started_text=started.isoformat(), digest="d",
                        samples=[HistorySample.model_validate(row) for row in rows])  # fmt: skip
    return build_trend(history, window=5)


def test_a_long_trend_is_cut_to_the_comment_limit_dropping_rows_from_the_end() -> None:
    # Astral characters count twice in UTF-16, as GitHub counts them.
    trend = _trend(failing=3000, stable=7, name="𝔰" * 20)
    text = render_trend_markdown(trend)
    assert size(text) <= PR_COMMENT_LIMIT < len(text.encode("utf-8"))
    rows = [line for line in text.splitlines() if line.startswith("| f.json::")]
    shown = int(re.search(r"_(\d+) more not shown", text).group(1))  # type: ignore[union-attr]
    assert len(rows) + shown == 3000 and len(rows) > 100
    assert rows[0].startswith("| f.json::" + "𝔰" * 20 + "-00000 |") and "-00001 |" in rows[1]
    assert text.endswith("7 stable samples not listed.\n")
    assert render_trend_markdown(trend) == text  # deterministic


def test_a_short_trend_is_whole_and_says_nothing_was_left_out() -> None:
    text = render_trend_markdown(_trend(failing=3, stable=2))
    assert text.startswith("<!-- pytest-omk:trend -->\n## pytest-omk trend: 2 runs")
    assert "more not shown" not in text and "### Samples needing a look (3)" in text
    assert "| f.json::sample-00002 | newly failing (run 2) | `✓✗` | `▅▅` |" in text


def test_a_smaller_limit_is_honoured() -> None:
    text = render_trend_markdown(_trend(failing=50, stable=0), limit=2000)
    assert size(text) <= 2000 and "more not shown" in text


def test_the_page_loads_nothing_and_runs_no_script() -> None:
    page = render_trend_html(_trend(failing=2, stable=1))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None and policy.group(1).startswith("default-src 'none'; style-src 'sha256-")
    assert "script" not in policy.group(1) and "<script" not in page
    assert policy.group(1).endswith("img-src data:; form-action 'none'; base-uri 'none'")
    assert not re.search(r"\b(src|href)=", page) and "http" not in page.replace("http-equiv", "")
    assert page.count('<tr class="trend-sample"') == 3 and page.count('data-state="newly failing"') == 2


def test_a_head_over_the_limit_is_cut_at_a_line_and_says_so() -> None:
    # Every run a sample set of its own: the list of sets alone is longer than the limit.
    history = History()
    for day in range(1, 401):
        started = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=day)
        row = HistorySample.model_validate({"nodeid": f"f.json::s{day}", "outcome": "passed"})
        history.add_run(path=f"r{day}.json", started=started, started_text=started.isoformat(), digest=f"d{day}",
                        samples=[row])  # fmt: skip
    text = render_trend_markdown(build_trend(history, window=5), limit=5000)
    assert size(text) <= 5000 and text.endswith("_Trend truncated to fit the size limit._\n")
    assert text.startswith("<!-- pytest-omk:trend -->\n") and "**400 sample sets**" in text
