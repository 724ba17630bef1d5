"""Money is shown one way (issue 51): the budget lines use the score table's format."""

from __future__ import annotations

from pytest_omk.report.budget import budget_lines
from pytest_omk.report.view import money


def test_the_budget_line_formats_money_as_the_score_table_does() -> None:
    section = {
        "limitUSD": 0.65,
        "spentUSD": 0.0293,
        "roles": {"model": {"calls": 1}, "judge": {"calls": 0}},
        "notRun": 0,
    }
    line = budget_lines(section)[0]
    assert line.startswith(f"omk budget: {money(0.0293)} of {money(0.65)} spent on 1 live calls")
    assert line.startswith("omk budget: $0.029 of $0.65 spent")
