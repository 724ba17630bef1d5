"""The ``--omk-html`` report in a real browser (headless Chromium over the DevTools protocol).

Each test writes a report with a real pytest run (the quickstart and A/B examples replayed from
their committed recordings, or a scripted command executor), opens it from disk and checks what a
reader would see: no console error, no network request, one row per sample, filtering, sorting,
details, the number of bars in each chart, and hostile output shown as text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from websockets.sync.client import ClientConnection

from tests.browser.cdp import Page
from tests.browser.reports import example_report, open_report
from tests.support import FakeCommand, OmkRun, executor_arg, sample, write_sample_set

HOSTILE = '</table></pre><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">\x1b[31mred\x00 & "q"'
BINS = 8  # half-point bins over 1-5


def _visible_rows(page: Page) -> list[str]:
    found: list[str] = page.evaluate(
        "[...document.querySelectorAll('#samples tbody tr')].filter(r => !r.hidden).map(r => r.cells[0].textContent)"
    )
    return found


def _choose_outcome(page: Page, outcome: str) -> None:
    page.evaluate(
        f"(() => {{ const s = document.getElementById('outcome-filter'); s.value = {json.dumps(outcome)};"
        " s.dispatchEvent(new Event('change')); })()"
    )


def _bars(page: Page) -> dict[str, int]:
    found: dict[str, int] = page.evaluate(
        "Object.fromEntries([...document.querySelectorAll('figure.chart')]"
        ".map(f => [f.dataset.chart, f.querySelectorAll('rect.bar').length]))"
    )
    return found


def _name(s: dict[str, Any]) -> str:
    return str(s["sample_id"]) + (f"[{s['variant']}]" if s.get("variant") else "")


def _expected_distribution_bars(report: dict[str, Any]) -> dict[str, int]:
    layers = ("composite", "fact", "behavior", "judge")
    return {
        f"dist-{layer}": BINS
        for layer in layers
        if any(s["scores"][layer] is not None for s in report["samples"])
    }


def test_quickstart_report_loads_filters_sorts_and_opens(
    pytester: pytest.Pytester, omk_run: OmkRun, browser: ClientConnection
) -> None:
    path, report = example_report(pytester, omk_run, "quickstart")
    page = open_report(browser, path)
    names = [_name(s) for s in report["samples"]]
    assert _visible_rows(page) == names and len(names) == report["summary"]["samples"] == 7

    expected = _expected_distribution_bars(report)
    for dimension in ("capability", "difficulty"):
        expected[f"{dimension}-pass-rate"] = expected[f"{dimension}-composite"] = len(
            report["coverage"][dimension]
        )
    assert _bars(page) == expected

    page.type_into("#filter", "refund")
    assert _visible_rows(page) == [n for n in names if "refund" in n]
    assert page.evaluate("document.getElementById('shown').textContent") == f"1 of {len(names)} samples"
    page.evaluate(
        "(() => { const f = document.getElementById('filter'); f.value = ''; f.dispatchEvent(new Event('input')); })()"
    )
    _choose_outcome(page, "xfailed")
    assert _visible_rows(page) == [_name(s) for s in report["samples"] if s["outcome"] == "xfailed"]
    _choose_outcome(page, "")
    assert len(_visible_rows(page)) == len(names)

    # Equal scores keep the report's order in both directions (Python's sort is stable too).
    ascending = [_name(s) for s in sorted(report["samples"], key=lambda s: s["scores"]["composite"])]
    descending = [_name(s) for s in sorted(report["samples"], key=lambda s: -s["scores"]["composite"])]
    assert ascending != names
    page.click("#samples th:nth-child(3) button")
    assert _visible_rows(page) == ascending
    assert (
        page.evaluate("document.querySelector('#samples th:nth-child(3)').getAttribute('aria-sort')")
        == "ascending"
    )
    page.click("#samples th:nth-child(3) button")
    assert _visible_rows(page) == descending
    page.click("#samples th:nth-child(1) button")
    assert _visible_rows(page) == sorted(names)

    first = report["samples"][0]
    page.click("#samples tbody tr[data-index='0']")
    opened = page.evaluate(
        "[...document.querySelectorAll('section.detail')].filter(d => !d.hidden).map(d => d.id)"
    )
    assert opened == ["detail-0"]
    assert page.evaluate("document.querySelector('#detail-0 pre.prompt').textContent") == first["prompt"]
    assert (
        page.evaluate("document.querySelector('#detail-0 pre.output').textContent")
        == first["execution"]["output"]
    )
    assert page.evaluate("document.querySelectorAll('#detail-0 table.assertions tbody tr').length") == len(
        first["assertions"]
    )
    assert page.evaluate("document.querySelectorAll('#detail-0 table.rubric tbody tr').length") == len(
        first["rubric"]
    )
    page.click("#samples tbody tr[data-index='0']")
    assert page.evaluate("document.getElementById('detail-0').hidden") is True
    assert page.console_errors() == []


def test_ab_compare_report_draws_variants_and_their_difference(
    pytester: pytest.Pytester, omk_run: OmkRun, browser: ClientConnection
) -> None:
    path, report = example_report(pytester, omk_run, "ab-compare")
    page = open_report(browser, path)
    assert len(_visible_rows(page)) == len(report["samples"]) == 16
    bars = _bars(page)
    shown_means = [
        v
        for v in report["variants"]
        for layer in ("composite", "fact", "behavior", "judge")
        if v["means"][layer] is not None
    ]
    assert bars["variant-means"] == len(shown_means) == 6
    assert bars["variant-difference"] == len(report["comparisons"]) == 1
    _choose_outcome(page, "failed")
    assert len(_visible_rows(page)) == report["summary"]["outcomes"]["failed"]


def test_hostile_output_is_shown_as_text(
    pytester: pytest.Pytester, omk_run: OmkRun, browser: ClientConnection, fake_command: FakeCommand
) -> None:
    write_sample_set(
        pytester,
        sample("evil", assertions=[{"type": "contains", "value": "</table>"}]),
        sample("plain", assertions=[{"type": "contains", "value": "fine"}]),
    )
    spec = fake_command.script({"evil": {"output": HOSTILE}, "plain": {"output": "fine"}})
    omk_run(executor_arg(spec), "--omk-html=report.html")
    page = open_report(browser, pytester.path / "report.html")
    assert page.evaluate("window.__pwned === undefined")
    assert page.evaluate("document.querySelectorAll('script').length") == 1  # the report's own
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert len(_visible_rows(page)) == 2  # '</table>' did not end the table
    page.click("#samples tbody tr[data-index='0']")
    shown = page.evaluate("document.querySelector('#detail-0 pre.output').textContent")
    assert shown == HOSTILE.replace("\x1b", "\\x1b").replace("\x00", "\\x00")
    reason = page.evaluate(
        "document.querySelector('#detail-0 table.assertions tbody td:last-child').textContent"
    )
    assert "</table>" in reason
    assert page.console_errors() == []
    assert json.dumps(page.requests()) == json.dumps([(pytester.path / "report.html").as_uri()])
