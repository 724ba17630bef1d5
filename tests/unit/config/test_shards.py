"""The pure parts of sharding: the weighted cut, the CI variables, the durations file."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_omk.config.ci_shard import shard_from_ci
from pytest_omk.config.durations import read_durations, weights_for, write_durations
from pytest_omk.config.shard import Shard, weighted_bounds
from pytest_omk.errors import ConfigError


def _best_max(weights: list[float], count: int) -> float:
    """The lightest heaviest block over every way of cutting ``weights`` into ``count`` blocks."""
    best = float("inf")
    for cuts in itertools.combinations(range(1, len(weights)), min(count, len(weights)) - 1):
        edges = [0, *cuts, len(weights)]
        best = min(best, max(sum(weights[a:b]) for a, b in itertools.pairwise(edges)))
    return best


@given(
    st.lists(st.integers(min_value=1, max_value=50), min_size=1, max_size=9),
    st.integers(min_value=1, max_value=4),
)
def test_the_weighted_cut_is_contiguous_complete_and_as_light_as_any(weights: list[int], count: int) -> None:
    seconds = [float(w) for w in weights]
    bounds = weighted_bounds(seconds, count)
    assert len(bounds) == count and bounds[0][0] == 0 and bounds[-1][1] == len(seconds)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
    if len(seconds) >= count:
        assert all(stop > start for start, stop in bounds)  # no shard is left empty
    heaviest = max(sum(seconds[a:b]) for a, b in bounds)
    assert heaviest == pytest.approx(_best_max(seconds, count))


@pytest.mark.parametrize(
    ("env", "shard"),
    [
        ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"}, Shard(2, 3)),
        ({"CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "2"}, Shard(1, 2)),
        ({"SYSTEM_JOBPOSITIONINPHASE": "1", "SYSTEM_TOTALJOBSINPHASE": "1"}, Shard(1, 1)),
        # GitLab sets CI_NODE_TOTAL=1 in every job: alone it names no system, the other one decides.
        ({"CI_NODE_TOTAL": "1", "BUILDKITE_PARALLEL_JOB": "3", "BUILDKITE_PARALLEL_JOB_COUNT": "4"}, Shard(4, 4)),
        # Two systems naming the same shard agree.
        ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "2", "JOB_COMPLETION_INDEX": "0", "OMK_SHARD_TOTAL": "2"},
         Shard(1, 2)),
    ],
)  # fmt: skip
def test_the_ci_variables_name_the_shard(env: dict[str, str], shard: Shard) -> None:
    assert shard_from_ci(env).shard == shard


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "٣", "9" * 12, ""])
def test_a_bad_index_is_refused(value: str) -> None:
    with pytest.raises(ConfigError, match="CI_NODE_INDEX"):
        shard_from_ci({"CI_NODE_INDEX": value, "CI_NODE_TOTAL": "2"})


def test_durations_round_trip_sorted(tmp_path: Path) -> None:
    path = tmp_path / ".test_durations"
    write_durations(path, {"b.json::y": 2.0, "a.json::x": 1.25})
    assert list(json.loads(path.read_text(encoding="utf-8"))) == ["a.json::x", "b.json::y"]
    assert read_durations(path) == {"a.json::x": 1.25, "b.json::y": 2.0}
    assert read_durations(tmp_path / "absent") is None
    assert weights_for(["a.json::x", "c.json::z"], {"a.json::x": 3.0}) == ([3.0, 3.0], 1)
