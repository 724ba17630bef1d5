"""Miss diagnostics name the field that moved, however deep it sits in the request."""

from __future__ import annotations

from pytest_omk.recordings.diff import differences


def test_nested_objects_and_lists_are_named_by_their_path() -> None:
    ours = {
        "body": {
            "model": "m",
            "messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "hi"}],
        }
    }
    recorded = {
        "body": {
            "model": "m",
            "messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}],
        }
    }
    assert differences(ours, recorded) == [
        "body.messages[0].content: 'Be terse.' (this run) vs 'Be kind.' (recorded)"
    ]


def test_lists_of_other_lengths_say_so() -> None:
    assert differences({"messages": [1, 2, 3]}, {"messages": [1, 2]}) == [
        "messages: 3 items in this run, 2 recorded"
    ]


def test_keys_on_one_side_only_and_flat_values() -> None:
    assert differences({"a": {"x": 1, "y": 2}, "b": "same"}, {"a": {"x": 1, "z": 3}, "b": "same"}) == [
        "a.y: only in this run",
        "a.z: only in the recording",
    ]
    assert differences({"model": "gpt-4o"}, {"model": "gpt-4o-mini"}) == [
        "model: 'gpt-4o' (this run) vs 'gpt-4o-mini' (recorded)"
    ]
