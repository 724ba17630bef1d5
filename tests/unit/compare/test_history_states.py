"""The trend's rules on planted outcome sequences: each state, its run, flakiness winning."""

from __future__ import annotations

import pytest

from pytest_omk.compare.history_states import (
    ABSENT,
    FAIL,
    PASS,
    SKIP,
    SampleState,
    sample_state,
    slide,
    windows,
)

P, F, S, A = PASS, FAIL, SKIP, ABSENT


@pytest.mark.parametrize(
    ("marks", "expected"),
    [
        ([P, P, P, P], SampleState("stable", None, 0)),
        ([F, F, F], SampleState("failing", None, 0)),
        ([P, P, P, F], SampleState("newly failing", 4, 1)),
        ([P, P, F, F], SampleState("failing since", 3, 1)),
        ([F, F, P, P], SampleState("fixed", 3, 1)),
        ([F, F, F, P], SampleState("fixed", 4, 1)),
        ([P, F, P], SampleState("flaky", None, 2)),
        ([P, F, P, F, P], SampleState("flaky", None, 4)),
        ([F, P, F], SampleState("flaky", None, 2)),
        ([S, S, A], SampleState("not run", None, 0)),
        ([], SampleState("not run", None, 0)),
        # Skipped and absent runs neither break nor start a streak.
        ([P, S, P, A, P], SampleState("stable", None, 0)),
        ([P, P, F, S, A], SampleState("newly failing", 3, 1)),
        ([P, S, F, A, F], SampleState("failing since", 3, 1)),
        ([A, A, F, P], SampleState("fixed", 4, 1)),
    ],
)
def test_states(marks: list[int], expected: SampleState) -> None:
    assert sample_state(marks) == expected


@pytest.mark.parametrize("marks", [[P, P, P], [F, F], [P, P, F], [F, P]])
def test_a_pass_rate_between_0_and_1_under_repeats_is_flaky_whatever_the_outcomes(marks: list[int]) -> None:
    assert sample_state(marks, repeated_flaky=True).state == "flaky"


def test_windows_take_the_last_k_runs_and_up_to_k_before() -> None:
    assert windows(5, 5) is None
    found = windows(8, 5)
    assert found is not None and (found.recent, found.previous) == ([4, 5, 6, 7, 8], [1, 2, 3])
    found = windows(12, 3)
    assert found is not None and (found.recent, found.previous) == ([10, 11, 12], [7, 8, 9])


def test_a_slide_needs_the_whole_interval_below_zero_and_five_pairs() -> None:
    previous = {f"s{i}": 4.0 for i in range(6)}
    assert slide(previous, {k: 3.0 for k in previous}).sliding
    assert not slide(previous, {k: 4.0 for k in previous}).sliding
    assert not slide(previous, {k: 5.0 for k in previous}).sliding
    few = {k: previous[k] for k in list(previous)[:4]}
    result = slide(few, {k: 1.0 for k in few})
    assert (result.pairs, result.interval, result.sliding) == (4, None, False)
    # Half the samples drop, half rise as much: no slide.
    mixed = {k: (3.0 if i % 2 else 5.0) for i, k in enumerate(previous)}
    assert not slide(previous, mixed).sliding
