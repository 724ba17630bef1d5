"""The Markdown section for a pull-request comment: what changed against the baseline, in a stable order."""

from __future__ import annotations

from typing import Any

from pytest_omk.report.markdown import render_markdown
from pytest_omk.report.pr_comment import MARKER, pr_comment_section


def change(nodeid: str, before: str, after: str, composite: tuple[float, float]) -> dict[str, Any]:
    scores = {"composite": composite[1], "fact": None, "behavior": None, "judge": None}
    return {
        "nodeid": nodeid,
        "baselineOutcome": before,
        "outcome": after,
        "scores": scores,
        "baselineScores": {**scores, "composite": composite[0]},
        "deltas": {"composite": round(composite[1] - composite[0], 2)},
    }


def test_pr_section_orders_and_counts() -> None:
    baseline = {
        "path": "base.json",
        "matched": 5,
        "new": 1,
        "notRun": 0,
        "changed": [
            change("b.yaml::z", "passed", "failed", (5.0, 3.0)),
            change("a.yaml::y", "passed", "passed", (4.0, 4.5)),
            change("a.yaml::x", "failed", "passed", (2.0, 5.0)),
            change("a.yaml::w", "passed", "error", (5.0, 1.0)),
        ],
    }
    text = "\n".join(pr_comment_section({"baseline": baseline}))
    assert (
        text.index(MARKER)
        < text.index("Newly failing (2)")
        < text.index("a.yaml::w")
        < text.index("b.yaml::z")
    )
    assert (
        text.index("b.yaml::z")
        < text.index("Newly passing (1)")
        < text.index("a.yaml::x")
        < text.index("Score changes (1)")
    )
    assert "4.00 → 4.50 (+0.50)" in text and text.endswith("1 unchanged.")
    assert pr_comment_section({}) == []


def test_the_summary_says_what_was_compared_once() -> None:
    baseline = {
        "path": "base.json",
        "matched": 2,
        "new": 0,
        "notRun": 0,
        "changed": [change("a.yaml::x", "passed", "failed", (5.0, 3.0))],
        "regressions": [],
    }
    text = render_markdown({"baseline": baseline, "samples": [], "summary": {}, "config": {}})
    assert text.count("Compared with base.json") == 1
    assert "### Regressions" in text and "No regressions." in text


def test_rows_are_dropped_from_the_end_to_fit_the_limit() -> None:
    changed = [change(f"f.yaml::fail{i:03d}", "passed", "failed", (5.0, 1.0)) for i in range(40)]
    changed += [change(f"f.yaml::pass{i:03d}", "failed", "passed", (1.0, 5.0)) for i in range(40)]
    changed += [change(f"f.yaml::move{i:03d}", "passed", "passed", (4.0, 4.5)) for i in range(40)]
    baseline = {"path": "base.json", "matched": 200, "new": 0, "notRun": 0, "changed": changed}
    full = "\n".join(pr_comment_section({"baseline": baseline}))
    lines = pr_comment_section({"baseline": baseline}, limit=4000)
    text = "\n".join(lines)
    assert len(text[text.index(MARKER) :]) <= 4000 < len(full[full.index(MARKER) :])
    # The newly failing rows come first and stay longest; the later tables lose their rows first.
    assert "f.yaml::fail000" in text and "f.yaml::move039" not in text
    assert "**Score changes (40)**" in text and "_40 more not shown" in text
    assert text.endswith("80 unchanged.")
    assert pr_comment_section({"baseline": baseline}, limit=4000) == lines  # deterministic
