"""Counts, costs and times an executor or a recording may report (``ExecutionResult.invalid_number``)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.models.results import MAX_NUMBER, ExecutionResult


def test_numbers_in_range_are_valid() -> None:
    result = ExecutionResult.model_validate(
        {
            "output": "x",
            "costUSD": 0.0,
            "inputTokens": MAX_NUMBER,
            "turns": [{"role": "assistant", "durationMs": 5}],
        }
    )
    assert result.invalid_number() is None


@pytest.mark.parametrize(
    ("fields", "invalid"),
    [
        ({"costUSD": -1}, ("costUSD", -1)),
        ({"retries": -5}, ("retries", -5)),
        ({"cacheReadTokens": MAX_NUMBER + 1}, ("cacheReadTokens", MAX_NUMBER + 1)),
        ({"latencyMs": float("inf")}, ("latencyMs", float("inf"))),
        ({"turns": [{"role": "tool", "durationMs": -3}]}, ("turns[0].durationMs", -3)),
        ({"mockStats": {"hits": -1}}, ("mockStats.hits", -1)),
        ({"mockStats": {"perMock": {"Read": -2}}}, ("mockStats.perMock.Read", -2)),
    ],
)
def test_the_first_number_out_of_range_is_named(fields: dict[str, Any], invalid: tuple[str, float]) -> None:
    assert ExecutionResult.model_validate({"output": "x", **fields}).invalid_number() == invalid


def test_nan_is_invalid() -> None:
    name, value = ExecutionResult(output="x", costUSD=float("nan")).invalid_number() or ("", 0.0)
    assert name == "costUSD" and value != value
