"""The one rule of a call made again with no recording of its own: the last recorded one replays."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_omk.recordings.repeats import OCCURRENCE, TAKE, last_recorded, recorded_or_last


def store(*takes: int) -> dict[int, str]:
    return {take: f"answer of take {take}" for take in takes}


def by_take(recorded: dict[int, str], looked: list[int]) -> Any:
    def lookup(identity: Mapping[str, Any]) -> str | None:
        looked.append(identity["request"]["take"])
        return recorded.get(identity["request"]["take"])

    return lookup


def test_the_nearest_earlier_take_replays() -> None:
    looked: list[int] = []
    identity: dict[str, Any] = {"executor": "openai", "request": {"prompt": "p", "take": 3}}
    assert last_recorded(by_take(store(0, 1), looked), identity, TAKE) == "answer of take 1"
    assert looked == [2, 1]
    assert identity["request"]["take"] == 3  # the identity asked about is left as it was


def test_nothing_earlier_and_a_first_call_find_nothing() -> None:
    assert last_recorded(by_take(store(), []), {"request": {"take": 2}}, TAKE) is None
    assert last_recorded(by_take(store(0), []), {"request": {"take": 0}}, TAKE) is None
    assert last_recorded(lambda _: "x", {"request": {}}, TAKE) is None
    assert last_recorded(lambda _: "x", {"occurrence": True}, OCCURRENCE) is None


def test_its_own_recording_wins_and_only_replay_only_falls_back() -> None:
    identity = {"request": {"take": 1}}
    assert recorded_or_last(by_take(store(0, 1), []), identity, TAKE, earlier=True) == "answer of take 1"
    assert recorded_or_last(by_take(store(0), []), identity, TAKE, earlier=True) == "answer of take 0"
    assert recorded_or_last(by_take(store(0), []), identity, TAKE, earlier=False) is None


def test_an_app_calls_occurrence_is_a_top_level_counter() -> None:
    recorded = {0: "first"}
    found = last_recorded(lambda i: recorded.get(i["occurrence"]), {"occurrence": 2, "body": {}}, OCCURRENCE)
    assert found == "first"
