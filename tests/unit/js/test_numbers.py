"""``to_fixed`` rounds as JavaScript's ``Number(x.toFixed(n))`` does, where Python's ``round`` does not."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.js.numbers import to_fixed
from pytest_omk.report.terminal import summarize


@pytest.mark.parametrize(
    ("value", "digits", "expected", "python_round"),
    [
        (2.5, 0, 3.0, 2),  # an exact tie: half-up, where round() goes to even
        (0.125, 2, 0.13, 0.12),  # exact in binary, so a real tie
        (2.675, 2, 2.67, 2.67),  # stored just below 2.675: both round down
        (0.0000125, 6, 0.000013, 0.000013),
    ],
)
def test_to_fixed_is_half_up_on_the_binary_value(
    value: float, digits: int, expected: float, python_round: float
) -> None:
    assert to_fixed(value, digits) == expected
    assert round(value, digits) == python_round


def test_the_run_totals_use_the_javascript_rounding() -> None:
    row: dict[str, Any] = {
        "outcome": "passed",
        "rubric": {},
        "assertions": [],
        "modelCalls": {"live": 1, "replayed": 0},
        "scores": {"assertions": 0.125, "fact": None, "behavior": None, "judge": None, "composite": 2.5},
        "execution": {"costUSD": 0.5e-6 + 2**-30},
        "usage": {"model": {"calls": 1, "live": 1, "costUSD": 0.5e-6 + 2**-30}, "judge": {"calls": 0}},
        "repeats": None,
    }
    totals = summarize([row])
    assert totals["means"]["assertions"] == 0.13
    assert totals["costUSD"] == to_fixed(0.5e-6 + 2**-30, 6)
