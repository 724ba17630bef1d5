"""Aggregating ``--omk-repeat`` runs: check pass rates, pass^N, mean ± sample SD; the stats helpers."""

from __future__ import annotations

import statistics

import pytest

from pytest_omk.grade.repeats import (
    CheckTally,
    check_verdict,
    layer_summary,
    mean_scores,
    pass_rate_message,
    repeats_record,
)
from pytest_omk.grade.stats import mean2, percentile, sd3
from pytest_omk.js.numbers import round3


def test_round3_is_half_up_on_the_binary_value() -> None:
    assert round3(0.0005) == 0.001
    assert round3(1.2345) == 1.234  # the double is just below the tie
    assert round3(2.0) == 2.0


def test_mean2_and_sd3_skip_missing_values() -> None:
    assert mean2([4.0, None, 5.0]) == 4.5
    assert mean2([None, None]) is None
    assert sd3([3.0]) is None
    values = [1.0, 3.0, 3.0, 5.0, 5.0]
    assert sd3([*values, None]) == round3(statistics.stdev(values))
    assert sd3([2.0, 2.0, 2.0]) == 0.0


def test_percentile_interpolates_like_statistics_quantiles() -> None:
    data = sorted([0.5, 1.25, -2.0, 3.0, 7.5, 0.0, 4.25])
    cuts = statistics.quantiles(data, n=40, method="inclusive")
    assert percentile(data, 0.025) == pytest.approx(cuts[0])
    assert percentile(data, 0.975) == pytest.approx(cuts[-1])
    assert percentile(data, 0.0) == data[0] and percentile(data, 1.0) == data[-1]
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_tally_and_pass_rate() -> None:
    tally = CheckTally.of(["pass", "fail", "missing", "pass"])
    assert (tally.passed, tally.failed, tally.missing, tally.runs) == (2, 1, 1, 4)
    assert tally.pass_rate(strict=False) == pytest.approx(2 / 3)
    assert tally.pass_rate(strict=True) == 0.5
    assert CheckTally.of(["missing"]).pass_rate(strict=False) is None


def test_check_passes_at_or_above_the_minimum() -> None:
    verdict = check_verdict(
        ["pass", "pass", "pass", "pass", "fail"],
        ["ok"] * 4 + ["no 'x' in output"],
        strict=False,
        min_pass_rate=0.8,
    )
    assert verdict.status == "pass"
    assert verdict.message == "passed 4/5 runs"


def test_check_fails_below_the_minimum_quoting_the_first_failed_run() -> None:
    verdict = check_verdict(
        ["pass", "fail", "fail"], ["ok", "first reason", "second"], strict=False, min_pass_rate=1.0
    )
    assert verdict.status == "fail"
    assert verdict.message == "passed 1/3 runs, below --omk-min-pass-rate 1; run 1: first reason"


def test_missing_runs_are_left_out_unless_strict() -> None:
    statuses, messages = ["pass", "missing", "pass"], ["ok", "no cost reported", "ok"]
    lenient = check_verdict(statuses, messages, strict=False, min_pass_rate=1.0)
    assert (lenient.status, lenient.message) == ("pass", "passed 2/2 runs (1 missing)")
    strict = check_verdict(statuses, messages, strict=True, min_pass_rate=1.0)
    assert strict.status == "fail"
    assert strict.message.endswith("run 1: missing evidence (--omk-strict): no cost reported")
    all_missing = check_verdict(
        ["missing", "missing"], ["no judge", "no judge"], strict=False, min_pass_rate=1.0
    )
    assert (all_missing.status, all_missing.message) == ("missing", "no judge")


def test_repeats_record_pass_rate_pass_all_and_layer_stats() -> None:
    scores = [
        {"assertions": 5.0, "fact": 5.0, "behavior": None, "judge": None, "composite": 5.0},
        {"assertions": 1.0, "fact": 1.0, "behavior": None, "judge": None, "composite": 1.0},
        {"assertions": 5.0, "fact": 5.0, "behavior": None, "judge": None, "composite": 5.0},
    ]
    record = repeats_record([True, False, True], scores)
    assert record["n"] == 3 and record["passed"] == 2
    assert record["passRate"] == pytest.approx(2 / 3)
    assert record["passAll"] is False
    assert record["composite"] == {"mean": 3.67, "sd": round3(statistics.stdev([5.0, 1.0, 5.0]))}
    assert record["behavior"] == {"mean": None, "sd": None}
    assert "runs" not in record
    assert repeats_record([True, True], scores[:1] * 2)["passAll"] is True
    assert mean_scores(scores)["composite"] == 3.67
    assert layer_summary(scores)["fact"]["sd"] == 2.309
    with pytest.raises(ValueError):
        repeats_record([True], [])


def test_pass_rate_message() -> None:
    record = repeats_record([True, False], [{"composite": 5.0}, {"composite": 3.0}])
    assert pass_rate_message(record, 1.0) == (
        "pass rate 0.50 (1/2 runs) is below --omk-min-pass-rate 1; pass^2: no; composite 4.00 ± 1.414"
    )
