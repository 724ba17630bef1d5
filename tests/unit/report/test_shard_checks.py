"""What merge checks of each shard: types of the run fields, one collection, the worst exit status."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.errors import ConfigError
from pytest_omk.report.shard_checks import check_same_collection, check_shard, worst_exit

GOOD: dict[str, Any] = {
    "config": {},
    "summary": {},
    "samples": [],
    "exitStatus": 0,
    "startedAt": "2026-01-01T00:00:00+00:00",
    "durationS": 1.5,
    "environment": {},
    "collectionErrors": [],
    "otherTests": {"total": 0},
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"exitStatus": "three"}, "exitStatus must be an integer, not 'three'"),
        ({"exitStatus": True}, "exitStatus must be an integer"),
        ({"durationS": "long"}, "durationS must be a number"),
        ({"samples": {"a": 1}}, "samples must be a list"),
        ({"config": []}, "config must be an object"),
        ({"samples": [1]}, "every entry of samples must be an object"),
        ({"otherTests": {"total": "many"}}, "otherTests must count with integers"),
    ],
)
def test_a_field_of_the_wrong_type_is_named(change: dict[str, Any], message: str) -> None:
    check_shard(Path("s.json"), GOOD)
    with pytest.raises(ConfigError, match=re.escape(f"s.json: {message}")):
        check_shard(Path("s.json"), {**GOOD, **change})


def test_every_shard_must_come_from_one_collection() -> None:
    one = {"collection": {"items": 3, "digest": "sha256:" + "a" * 64}}
    other = {"collection": {"items": 3, "digest": "sha256:" + "b" * 64}}
    check_same_collection([(Path("1.json"), one), (Path("2.json"), one)])
    with pytest.raises(ConfigError, match=r"2\.json and 1\.json come from different sample sets"):
        check_same_collection([(Path("1.json"), one), (Path("2.json"), other)])
    with pytest.raises(ConfigError, match=r"2\.json does not say which sample set it ran"):
        check_same_collection([(Path("1.json"), one), (Path("2.json"), {})])


@pytest.mark.parametrize(
    ("statuses", "worst"),
    [([0, 0], 0), ([0, 5], 5), ([5, 1], 1), ([1, 2], 2), ([2, 3], 3), ([3, 4], 4), ([0, 99], 99), ([], 0)],
)
def test_the_worst_exit_status_wins(statuses: list[int], worst: int) -> None:
    assert worst_exit(statuses) == worst
