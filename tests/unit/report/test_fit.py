"""The scores table fits 80 columns unless asked to be wide; costs keep significant digits."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.report.terminal import render_summary
from pytest_omk.report.view import money


def row(nodeid: str, cost: float) -> dict[str, Any]:
    return {
        "nodeid": nodeid,
        "outcome": "passed",
        "scores": {"assertions": 5.0, "composite": 5.0, "fact": 5.0, "behavior": None, "judge": 4.6},
        "execution": {"costUSD": cost, "latencyMs": 12345, "replayed": True},
        "modelCalls": {"live": 0, "replayed": 1},
        "rubric": {},
        "assertions": [],
    }


ROWS = [
    row("evals/customer-support/refunds/eval-samples.yaml::refund-after-45-days", 0.00004),
    row("e.yaml::b", 0.5),
]


def test_the_table_fits_80_columns_by_default() -> None:
    lines = render_summary(ROWS, verbose=True)
    assert max(len(line) for line in lines) <= 80
    assert lines[0].split() == [
        "outcome",
        "comp",
        "fact",
        "behav",
        "judge",
        "cost",
        "time",
        "replay",
    ]
    assert "evals/customer-support/refunds/eval-samples.yaml::refund-after-45-days" in lines  # whole
    assert not any("…" in line for line in lines)
    assert lines[1] == ROWS[0]["nodeid"] and "$0.00004" in lines[2]  # the id on a line of its own


@pytest.mark.parametrize("kwargs", [{"wide": True}, {"width": 200}])
def test_a_wide_terminal_or_verbose_shows_everything(kwargs: dict[str, Any]) -> None:
    lines = render_summary(ROWS, verbose=True, **kwargs)
    assert lines[0].split()[2] == "composite"
    assert lines[1].startswith("evals/customer-support/refunds/eval-samples.yaml::refund-after-45-days")


@pytest.mark.parametrize(
    ("value", "shown"), [(0.00004, "$0.00004"), (0.03, "$0.03"), (0.5, "$0.50"), (3.87e-05, "$0.000039")]
)
def test_costs_have_significant_digits(value: float, shown: str) -> None:
    assert money(value) == shown
