"""Terminal lines of the comparison blocks of ``omk scores``."""

from __future__ import annotations

from typing import Any

from pytest_omk.report.comparisons import (
    baseline_lines,
    comparison_lines,
    coverage_lines,
    table,
    variant_lines,
)

_MEANS = {"assertions": 4.0, "fact": 4.0, "behavior": None, "judge": None, "composite": 4.0}


def test_table_alignment() -> None:
    assert table(["name", "n"], [["a", "10"], ["long", "2"]]) == ["  name   n", "  a     10", "  long   2"]


def test_variant_lines() -> None:
    variants = [
        {"name": "a", "samples": 6, "outcomes": {"passed": 5, "failed": 1}, "means": _MEANS},
        {"name": "b", "samples": 6, "outcomes": {"passed": 6}, "means": {**_MEANS, "composite": 4.5}},
    ]
    comparisons = [
        {
            "variant": "b",
            "reference": "a",
            "pairs": 6,
            "meanDifference": 0.5,
            "interval": {"low": 0.1, "high": 0.9, "confidence": 0.95},
            "verdict": "better",
        },
    ]
    lines = variant_lines(variants, comparisons)
    assert lines[0] == "variants (mean over samples):"
    assert lines[2].split() == ["a", "6", "5", "1", "4.00", "-", "-", "4.00"]
    assert lines[4] == "paired comparison of composite vs a (95% bootstrap interval, 10000 resamples):"
    assert lines[5] == "  b - a: +0.50 [+0.10, +0.90] over 6 samples: better"
    few = [{**comparisons[0], "pairs": 2, "interval": None, "verdict": "too few samples"}]
    assert variant_lines(variants, few)[-1] == "  b - a: +0.50 over 2 samples: too few samples"
    assert variant_lines([], []) == []


def test_baseline_lines() -> None:
    section: dict[str, Any] = {
        "path": "base.json",
        "matched": 2,
        "new": 1,
        "notRun": 0,
        "layers": [
            {
                "variant": None,
                "layers": {
                    "composite": {"delta": -0.5},
                    "fact": {"delta": -1.0},
                    "behavior": {"delta": None},
                    "judge": {"delta": 0.0},
                    "assertions": {"delta": -1.0},
                },
            }
        ],
        "changed": [
            {
                "nodeid": "e.json::s",
                "outcome": "failed",
                "baselineOutcome": "passed",
                "baselineScores": {"composite": 5.0},
                "scores": {"composite": 4.0},
                "deltas": {"composite": -1.0},
            }
        ],
    }
    lines = baseline_lines(section, "omk: regression ...")
    assert lines == [
        "baseline base.json: 2 samples matched, 1 new, 0 not run",
        "  mean delta: composite -0.50  fact -1.00  behavior -  judge +0.00",
        "  changed: e.json::s  passed -> failed  composite 5.00 -> 4.00 (-1.00)",
        "omk: regression ...",
    ]
    assert baseline_lines(None, None) == []


def test_coverage_lines_and_blocks() -> None:
    section = {
        "capability": [{"name": "qa", "variant": None, "samples": 2, "passRate": 0.5, "composite": 3.5}],
        "difficulty": [],
    }
    assert coverage_lines(section) == [
        "coverage by capability:",
        "  capability  samples  pass rate  composite",
        "  qa                2       0.50       3.50",
    ]
    analysis: dict[str, Any] = {"variants": [], "comparisons": [], "baseline": None, "coverage": section}
    assert comparison_lines(analysis, message=None, coverage=False) == []
    assert comparison_lines(analysis, message=None, coverage=True)[:2] == ["", "coverage by capability:"]
