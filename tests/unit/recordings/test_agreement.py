"""A recording's readable request against the one its key hashes (``recordings/agreement.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.recordings.agreement import request_difference, same_text

EXPECTED: dict[str, Any] = {
    "executor": "command:agent",
    "request": {"model": "m", "prompt": "Rotate the key sk-abcdefgh123 now.", "repeat": 0, "jsonMode": False},
}


def _with(**request: Any) -> dict[str, Any]:
    return {**EXPECTED, "request": {**EXPECTED["request"], **request}}


def test_the_same_request_agrees() -> None:
    assert request_difference(_with(), EXPECTED) is None


@pytest.mark.parametrize(
    ("stored", "where"),
    [
        ({**EXPECTED, "executor": "openai"}, "executor"),
        (_with(model="gpt-5-pro"), "request.model"),
        (_with(prompt="Is this safe to merge?"), "request.prompt"),
        (_with(jsonMode=0), "request.jsonMode"),
        (_with(extra=1), "request.extra"),
        ({"executor": "command:agent"}, "request"),
        ({**EXPECTED, "request": ["not", "an", "object"]}, "request"),
    ],
)
def test_the_first_difference_is_named(stored: dict[str, Any], where: str) -> None:
    assert request_difference(stored, EXPECTED) == where


def test_a_redacted_secret_stands_for_what_was_scrubbed() -> None:
    assert request_difference(_with(prompt="Rotate the key [REDACTED] now."), EXPECTED) is None


@pytest.mark.parametrize(
    ("stored", "expected", "same"),
    [
        ("a [REDACTED] b", "a 12345678 b", True),
        ("a [REDACTED] b", "a 1234567 b", False),  # shorter than any secret the scrubber masks
        ("[REDACTED] and [REDACTED]", "xxxxxxxx and yyyyyyyyy", True),
        ("a [REDACTED] b", "A 12345678 b", False),
        ("a [REDACTED] b", "a 12345678 c", False),
        ("[REDACTED]" * 500, "z" * 100, False),  # many markers: linear, not backtracking
    ],
)
def test_same_text(stored: str, expected: str, same: bool) -> None:
    assert same_text(stored, expected) is same
