"""Whether a recording's readable request is the request its key hashes.

A recording shows its request in the clear (executor, model, prompt...) and is found by its key, a
hash of that request. Nothing tied the two together: a file whose readable request said ``openai``
/ ``gpt-5-pro`` / another prompt replayed as the answer to the call its key named, so a reviewer
reading a pull request's diff saw a request that was not the one answered. Before a recording is
replayed its readable request is compared with what this call would store
(:func:`request_difference`).

What the store writes is the request scrubbed of secrets and with long strings cut
(:mod:`pytest_omk._util.stored_text`): the comparison is with that form. A ``[REDACTED]`` in the
file matches any run of at least 8 characters, since the secrets known where it was recorded may
differ from this machine's; it can hide a part of a request, never show another one.
"""

from __future__ import annotations

from typing import Any

from pytest_omk.recordings.scrub import MIN_SECRET_LENGTH, REDACTED


def request_difference(stored: Any, expected: Any, where: str = "") -> str | None:
    """The first place (``request.model``) where ``stored`` is not ``expected``; ``None`` if it is."""
    here = where or "the request"
    if isinstance(expected, dict):
        if not isinstance(stored, dict):
            return here
        extra = sorted(set(stored) ^ set(expected))
        if extra:
            return _join(where, str(extra[0]))
        return next(
            (
                found
                for key in expected
                if (found := request_difference(stored[key], expected[key], _join(where, key)))
            ),
            None,
        )
    if isinstance(expected, list):
        if not isinstance(stored, list) or len(stored) != len(expected):
            return here
        return next(
            (
                found
                for i, item in enumerate(expected)
                if (found := request_difference(stored[i], item, f"{here}[{i}]"))
            ),
            None,
        )
    if isinstance(expected, str):
        return None if isinstance(stored, str) and same_text(stored, expected) else here
    # bool is an int in Python: true and 1 are different requests.
    same = stored == expected and isinstance(stored, bool) == isinstance(expected, bool)
    return None if same else here


def same_text(stored: str, expected: str) -> bool:
    """``stored == expected``, each ``[REDACTED]`` of ``stored`` standing for 8 or more characters.

    Matched left to right without a regular expression (a file holding many markers must not cost
    exponential time): the leftmost place of each literal part is always a valid one.
    """
    if stored == expected:
        return True
    if REDACTED not in stored:
        return False
    first, *middle, last = stored.split(REDACTED)
    if not expected.startswith(first):
        return False
    at = len(first)
    for part in middle:
        found = expected.find(part, at + MIN_SECRET_LENGTH)
        if found < 0:
            return False
        at = found + len(part)
    return len(expected) - len(last) >= at + MIN_SECRET_LENGTH and expected.endswith(last)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
