"""Money is shown one way (issue 51): the budget lines use the score table's format."""

from __future__ import annotations

from typing import Any

from pytest_omk.report.budget import budget_lines
from pytest_omk.report.view import money


def test_the_budget_line_formats_money_as_the_score_table_does() -> None:
    section = {"limitUSD": 0.65, "spentUSD": 0.0293, "notRun": 0}
    usage: dict[str, dict[str, Any]] = {"model": {"spent": {"pricedCalls": 1}}, "judge": {"spent": {}}}
    line = budget_lines(section, usage)[0]
    assert line.startswith(f"omk budget: {money(0.0293)} of {money(0.65)} spent on 1 live calls")
    assert line.startswith("omk budget: $0.029 of $0.65 spent")
