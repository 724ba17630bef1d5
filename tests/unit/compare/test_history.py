"""The compact history: reports in, one trend out, the same whatever order the reports came in."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from pytest_omk.compare.history import History, layer_point
from pytest_omk.compare.history_trend import build_trend
from pytest_omk.errors import ConfigError
from pytest_omk.models.history import HistorySample

DAY0 = datetime(2026, 1, 1, tzinfo=UTC)


def _sample(name: str, outcome: str, composite: float | None, rate: float | None = None) -> HistorySample:
    repeats = {"passRate": rate} if rate is not None else None
    return HistorySample.model_validate(
        {
            "nodeid": f"f.json::{name}",
            "outcome": outcome,
            "scores": {"composite": composite},
            "repeats": repeats,
        }
    )


def _add(history: History, day: int, samples: list[HistorySample], digest: str = "d1") -> None:
    started = DAY0 + timedelta(days=day)
    history.add_run(path=f"r{day}.json", started=started, started_text=started.isoformat(), digest=digest,
                    samples=samples)  # fmt: skip


def test_runs_are_ordered_by_start_and_states_read_across_them() -> None:
    runs = {
        3: [_sample("a", "failed", 1.0), _sample("b", "passed", 5.0)],
        1: [_sample("a", "passed", 5.0), _sample("b", "passed", 4.0)],
        2: [_sample("a", "passed", 4.5), _sample("b", "skipped", None)],
    }
    trends = []
    for order in itertools.permutations(runs):
        history = History()
        for day in order:
            _add(history, day, runs[day])
        trends.append(build_trend(history, window=1).model_dump())
    assert all(trend == trends[0] for trend in trends)
    trend = trends[0]
    assert [r["path"] for r in trend["runs"]] == ["r1.json", "r2.json", "r3.json"]
    a, b = trend["samples"]
    assert (a["nodeid"], a["state"], a["since"], a["composite"]) == (
        "f.json::a",
        "newly failing",
        3,
        [5.0, 4.5, 1.0],
    )
    assert (b["state"], b["outcomes"]) == ("stable", ["pass", "skip", "pass"])


def test_repeats_with_a_pass_rate_between_0_and_1_make_a_sample_flaky() -> None:
    history = History()
    _add(history, 1, [_sample("a", "passed", 5.0, rate=1.0)])
    _add(history, 2, [_sample("a", "passed", 4.0, rate=0.8)])
    (sample,) = build_trend(history, window=5).samples
    assert (sample.state, sample.repeatedFlaky, sample.flips) == ("flaky", True, 0)


def test_a_sample_listed_twice_in_one_report_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"r1.json: sample f.json::a is listed twice"):
        _add(History(), 1, [_sample("a", "passed", 5.0), _sample("a", "failed", 1.0)])


def test_the_same_node_id_in_two_variants_is_two_samples() -> None:
    history = History()
    one = HistorySample.model_validate({"nodeid": "f::a", "variant": "x", "outcome": "passed"})
    two = HistorySample.model_validate({"nodeid": "f::a", "variant": "y", "outcome": "failed"})
    _add(history, 1, [one, two])
    assert [(s.variant, s.state) for s in build_trend(history, window=5).samples] == [
        ("y", "failing"),
        ("x", "stable"),
    ]


def test_sample_sets_follow_the_collection_digest() -> None:
    history = History()
    _add(history, 1, [_sample("a", "passed", 5.0), _sample("b", "passed", 5.0)], digest="one")
    _add(history, 2, [_sample("a", "passed", 5.0), _sample("c", "passed", 5.0)], digest="two")
    _add(history, 3, [_sample("a", "passed", 5.0), _sample("b", "passed", 5.0)], digest="one")
    trend = build_trend(history, window=1)
    assert [run.sampleSet for run in trend.runs] == [1, 2, 1]
    first, second = trend.sampleSets
    assert (first.runs, first.added, first.removed) == ([1, 3], [], [])
    assert (second.runs, second.added, second.removed) == ([2], ["f.json::c"], ["f.json::b"])
    assert trend.sliding and all(s.acrossSampleSets for s in trend.sliding)


def test_a_layer_point_is_the_mean_with_a_normal_interval_kept_in_1_to_5() -> None:
    point = layer_point([4.0, 5.0, 3.0, 4.0])
    # mean 4, sd 0.8165, se 0.408: 4 ± 0.80
    assert (point.mean, point.interval, point.samples) == (4.0, [3.2, 4.8], 4)
    assert layer_point([5.0, 1.0]).interval == [1.0, 5.0]
    assert layer_point([3.0]).interval is None and layer_point([]).mean is None
