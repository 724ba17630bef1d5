"""The HTML report's charts in a real browser: score histograms over 1-5, a chart grid as wide as
the samples table, variant bars grouped per layer, and an A/B run's outputs side by side."""

from __future__ import annotations

import pytest
from websockets.sync.client import ClientConnection

from tests.browser.reports import example_report, open_report
from tests.support import OmkRun

LAYERS = ("composite", "fact", "behavior", "judge")


def test_histograms_bin_scores_over_one_to_five(
    pytester: pytest.Pytester, omk_run: OmkRun, browser: ClientConnection
) -> None:
    path, report = example_report(pytester, omk_run, "quickstart")
    page = open_report(browser, path)
    labels = page.evaluate(
        "[...document.querySelectorAll('figure[data-chart=dist-composite] text.label')].map(t => t.textContent)"
    )
    assert labels == ["1–1.5", "1.5–2", "2–2.5", "2.5–3", "3–3.5", "3.5–4", "4–4.5", "4.5–5"]
    counts = page.evaluate(
        "[...document.querySelectorAll('figure[data-chart=dist-composite] rect.bar')].map(r => +r.dataset.value)"
    )
    assert sum(counts) == sum(1 for s in report["samples"] if s["scores"]["composite"] is not None)


def test_chart_grid_is_as_wide_as_the_table(
    pytester: pytest.Pytester, omk_run: OmkRun, browser: ClientConnection
) -> None:
    path, _ = example_report(pytester, omk_run, "quickstart")
    page = open_report(browser, path)
    for width in (1280, 900):
        page.send(
            "Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False
        )
        box = page.evaluate(
            "(() => { const t = document.getElementById('samples').getBoundingClientRect();"
            " const f = [...document.querySelectorAll('figure.chart')].map(e => e.getBoundingClientRect());"
            " return {left: t.left, right: t.right, figLeft: Math.min(...f.map(r => r.left)),"
            " figRight: Math.max(...f.map(r => r.right)), overflow: f.some(r => r.right > t.right + 1)}; })()"
        )
        assert abs(box["figLeft"] - box["left"]) <= 1 and abs(box["figRight"] - box["right"]) <= 1, (
            width,
            box,
        )
        assert not box["overflow"], (width, box)


def test_variant_bars_are_grouped_per_layer(
    pytester: pytest.Pytester, omk_run: OmkRun, browser: ClientConnection
) -> None:
    path, report = example_report(pytester, omk_run, "ab-compare")
    page = open_report(browser, path)
    groups = page.evaluate(
        "[...document.querySelectorAll('figure[data-chart=variant-means] g.layer-group')]"
        ".map(g => [g.dataset.layer, [...g.querySelectorAll('rect.bar')].map(r => r.dataset.variant)])"
    )
    names = [v["name"] for v in report["variants"]]
    expected = [
        [layer, names] for layer in LAYERS if any(v["means"][layer] is not None for v in report["variants"])
    ]
    assert groups == expected


def test_ab_run_shows_variants_side_by_side(
    pytester: pytest.Pytester, omk_run: OmkRun, browser: ClientConnection
) -> None:
    path, report = example_report(pytester, omk_run, "ab-compare")
    page = open_report(browser, path)
    page.click("#samples tbody tr[data-index='0']")
    first = report["samples"][0]
    pair = [
        s for s in report["samples"] if s["file"] == first["file"] and s["sample_id"] == first["sample_id"]
    ]
    columns = page.evaluate(
        "[...document.querySelectorAll('#detail-0 .side-by-side .variant-column')].map(c => ({"
        " name: c.dataset.variant, output: c.querySelector('pre.output').textContent,"
        " checks: c.querySelectorAll('table.assertions tbody tr').length }))"
    )
    assert columns == [
        {"name": s["variant"], "output": s["execution"]["output"], "checks": len(s["assertions"])}
        for s in pair
    ]
    # Side by side: the columns share one row on a wide page.
    tops = page.evaluate(
        "[...document.querySelectorAll('#detail-0 .side-by-side .variant-column')].map(c => c.getBoundingClientRect().top)"
    )
    assert len(set(tops)) == 1
