"""The run's calls by role, summed from the records and put in words."""

from __future__ import annotations

from typing import Any

from pytest_omk.report.usage import role_line, total_cost, usage_lines, usage_totals


def part(calls: int, cost: float | None, tokens: int | None = None, **more: int) -> dict[str, Any]:
    return {
        "calls": calls, "live": calls, "replayed": 0, "failed": 0, "inputTokens": tokens,
        "outputTokens": tokens, "costUSD": cost, "costUnknown": 0, **more,
    }  # fmt: skip


def test_roles_are_summed_apart_and_the_total_holds_both() -> None:
    rows: list[dict[str, Any]] = [
        {"usage": {"model": part(1, 0.01, 10), "judge": part(2, 0.002, 100)}},
        {"usage": {"model": part(1, None, failed=1), "judge": part(0, None)}},
        {"outcome": "passed"},  # a record of an older report: no usage, adds nothing
    ]
    usage = usage_totals(rows)
    assert usage["model"] == {
        "calls": 2, "live": 2, "replayed": 0, "failed": 1, "inputTokens": 10, "outputTokens": 10,
        "costUSD": 0.01, "costUnknown": 0,
    }  # fmt: skip
    assert usage["judge"]["calls"] == 2 and usage["judge"]["costUSD"] == 0.002
    assert total_cost(usage) == 0.012
    assert total_cost(usage_totals([])) is None


def test_the_role_lines_appear_when_the_judge_made_calls() -> None:
    assert usage_lines({"model": part(3, 0.01), "judge": part(0, None)}) == []
    lines = usage_lines({"model": part(3, 0.01, 20), "judge": part(1, None, 1234, costUnknown=1)})
    assert lines == [
        "model under test: 3 calls (3 live, 0 replayed), tokens 20 in / 20 out, $0.01",
        "judge: 1 call (1 live, 0 replayed), tokens 1,234 in / 1,234 out, - (+ 1 of unknown cost)",
    ]
    assert (
        role_line("model", part(1, None, failed=1))
        == "model under test: 1 call (1 live, 0 replayed, 1 failed), -"
    )
