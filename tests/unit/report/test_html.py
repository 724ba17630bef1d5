"""Pure parts of the HTML report: escaping, chart data, the page's self-containment."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_omk.report.html import render_html
from pytest_omk.report.html.escape import text
from pytest_omk.report.html.sections import all_charts, baseline_charts, distribution_charts, repeat_charts
from pytest_omk.report.view import money


def _sample(sample_id: str, composite: float | None, **extra: Any) -> dict[str, Any]:
    scores = {
        "assertions": composite,
        "fact": composite,
        "behavior": None,
        "judge": None,
        "composite": composite,
    }
    return {
        "nodeid": f"f.json::{sample_id}",
        "sample_id": sample_id,
        "outcome": "passed",
        "scores": scores,
        "assertions": [],
        "rubric": {},
        "execution": None,
        **extra,
    }


def _bar_values(svg: str) -> list[float]:
    return [float(v) for v in re.findall(r'<rect class="bar[^"]*"[^>]*data-value="([^"]+)"', svg)]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ('" onmouseover="x', "&quot; onmouseover=&quot;x"),
        ("a\x1b[31mb\x00c\rd", "a\\x1b[31mb\\x00c\\x0dd"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
        ("del\x7f c1\x85", "del\\x7f c1\\x85"),
        ("bidi \u202e~ fr- mr", "bidi \\u202e~ fr- mr"),
        ("zero\u200bwidth, tag \U000e0041", "zero\\u200bwidth, tag \\U000e0041"),
        ("lone \ud800 surrogate", "lone ? surrogate"),
    ],
)
def test_text_escapes_markup_and_shows_control_characters(raw: str, shown: str) -> None:
    assert text(raw) == shown


def test_distribution_uses_eight_half_point_bins_over_one_to_five() -> None:
    samples = [
        _sample("a", 1.0),
        _sample("b", 3.0),
        _sample("c", 4.99),
        _sample("d", 5.0),
        _sample("e", None),
    ]
    charts = distribution_charts(samples)
    assert [re.search(r'data-chart="([^"]+)"', c).group(1) for c in charts] == ["dist-composite", "dist-fact"]  # type: ignore[union-attr]
    assert _bar_values(charts[0]) == [1, 0, 0, 0, 1, 0, 0, 2]


def test_repeat_chart_has_a_bar_per_repeated_sample_and_pass_k() -> None:
    repeats = {"n": 4, "passed": 3, "passRate": 0.75, "passAll": False}
    samples = [
        _sample("a", 5.0, repeats={**repeats, "passed": 4, "passRate": 1.0, "passAll": True}),
        _sample("b", 4.0, repeats=repeats),
        _sample("c", 4.0),
    ]
    (chart,) = repeat_charts(samples)
    assert _bar_values(chart) == [1.0, 0.75]
    assert "pass^4 (every run passed): 1 of 2 samples" in chart


def test_baseline_chart_shows_each_layer_change() -> None:
    baseline = {
        "path": "old.json",
        "matched": 3,
        "new": 0,
        "notRun": 1,
        "layers": [
            {
                "variant": None,
                "layers": {"composite": {"delta": -0.5}, "fact": {"delta": 0.25}, "judge": {"delta": None}},
            }
        ],
    }
    (chart,) = baseline_charts(baseline)
    assert _bar_values(chart) == [0.5, 0.25]
    assert 'class="bar fail"' in chart and "-0.50" in chart and "+0.25" in chart


def test_no_data_no_chart() -> None:
    assert (
        all_charts({"samples": [_sample("a", None)], "coverage": {}, "variants": [], "baseline": None}) == []
    )


def test_page_is_self_contained_and_its_policy_allows_only_its_own_script() -> None:
    page = render_html(
        {
            "summary": {"samples": 1, "outcomes": {"passed": 1}},
            "config": {},
            "samples": [_sample("a", 4.0, execution={"output": "<img src=https://x.test/p.png>"})],
        }
    )
    assert page.count("<script>") == 1 and page.count("<style>") == 1
    assert not re.search(r"<[^>]*\s(src|href|srcset|action)\s*=", page), "no element may load anything"
    assert "&lt;img src=https://x.test/p.png&gt;" in page
    policy = re.search(r'Content-Security-Policy" content="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    assert policy.startswith("default-src 'none'; style-src 'sha256-") and "script-src 'sha256-" in policy


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "-"), (0, "$0"), (0.0021, "$0.0021"), (3.87e-05, "$0.000039"), (12.5, "$12.50")],
)
def test_money_keeps_two_significant_digits_below_a_cent(value: float | None, shown: str) -> None:
    assert money(value) == shown
