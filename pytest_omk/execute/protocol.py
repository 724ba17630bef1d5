"""The command protocol as the reference reads it: what a command (or a Python callable) answered.

A JSON object with ``ok`` or ``output`` is a protocol answer; any other stdout is the model's plain
text. An answer the reference would refuse is an execution failure (the item errors; the model is
not graded), never a low score:

- ``ok`` not a boolean, ``output`` not a string (or null), ``error`` not a string;
- a token or turn count (``inputTokens``, ``outputTokens``, ``cacheReadTokens``,
  ``cacheCreationTokens``, ``numTurns``, ``fullNumTurns``, ``numSubAgents``) that is not a
  non-negative whole number; ``costUSD`` or ``durationApiMs`` negative or not finite;
- a ``toolCalls`` (or ``turns[].toolCalls``) entry without a non-blank ``tool`` or a boolean
  ``success``, or with a ``status`` that contradicts ``success``;
- ``mockStats`` whose ``perMock`` counts do not add up to ``hits`` (reported, or read from the
  hook file of the mock channel);
- ``ok: false`` (its ``error`` is the reason);
- a blank or whitespace-only answer: "completed without model output".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pytest_omk.errors import ExecutionError
from pytest_omk.js.text import js_trim

COUNTS = (
    "inputTokens",
    "outputTokens",
    "cacheReadTokens",
    "cacheCreationTokens",
    "numTurns",
    "fullNumTurns",
    "numSubAgents",
)
AMOUNTS = ("costUSD", "durationApiMs")
STATUSES = ("success", "failure", "cancelled", "unknown")
MAX_SAFE = 2**53 - 1
NO_OUTPUT = "completed without model output"


def is_protocol(data: Any) -> bool:
    """Whether parsed stdout is a protocol answer (else the stdout is plain text)."""
    return isinstance(data, dict) and ("ok" in data or "output" in data)


def _amount(value: object) -> bool:
    """A non-negative finite JSON number (booleans are not numbers in JavaScript)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, int):  # a 400-digit integer has no float (math.isfinite would overflow)
        return value >= 0
    return math.isfinite(value) and value >= 0


def _shown(value: object) -> str:
    """``value`` as the message shows it: a huge number is cut (its length still said)."""
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:20]}... ({len(text)} characters)"


def _count_error(data: dict[str, Any]) -> str | None:
    for key in COUNTS:
        value: Any = data.get(key)
        whole = _amount(value) and value <= MAX_SAFE and (isinstance(value, int) or float(value).is_integer())
        if key in data and not whole:
            return f'"{key}" must be a non-negative whole number, got {_shown(value)}'
    for key in AMOUNTS:
        value = data.get(key)
        if key in data and not _amount(value):
            return f'"{key}" must be a non-negative finite number, got {_shown(value)}'
    return None


def _call_error(call: Any, at: str) -> str | None:
    if not isinstance(call, dict):
        return f"{at} must be an object"
    if not isinstance(call.get("tool"), str) or not js_trim(call["tool"]):
        return f"{at}.tool must be a non-blank string"
    if not isinstance(call.get("success"), bool):
        return f"{at}.success must be a boolean (true or false), got {call.get('success')!r}"
    status = call.get("status")
    if "status" in call and (status not in STATUSES or call["success"] != (status == "success")):
        return f"{at}.status {status!r} contradicts success: {str(call['success']).lower()}"
    return None


def _trace_error(data: dict[str, Any]) -> str | None:
    calls = data.get("toolCalls")
    places: list[tuple[Any, str]] = []
    if "toolCalls" in data:
        if not isinstance(calls, list):
            return '"toolCalls" must be an array'
        places += [(call, f"toolCalls[{i}]") for i, call in enumerate(calls)]
    turns = data.get("turns")
    if isinstance(turns, list):
        for t, turn in enumerate(turns):
            inner = turn.get("toolCalls") if isinstance(turn, dict) else None
            places += [(call, f"turns[{t}].toolCalls[{i}]") for i, call in enumerate(inner or [])]
    for call, at in places:
        if (problem := _call_error(call, at)) is not None:
            return problem
    return None


def check_answer(data: dict[str, Any], *, source: str) -> None:
    """Raise :class:`ExecutionError` when the reference would refuse this protocol answer."""
    if "ok" in data and not isinstance(data["ok"], bool):
        raise ExecutionError(f'{source} answered malformed protocol JSON: "ok" must be a boolean')
    if data.get("output") is not None and not isinstance(data["output"], str):
        raise ExecutionError(f'{source} answered malformed protocol JSON: "output" must be a string or null')
    if "error" in data and not isinstance(data["error"], str):
        raise ExecutionError(f'{source} answered malformed protocol JSON: "error" must be a string')
    problem = _count_error(data) or _trace_error(data)
    if problem is not None:
        raise ExecutionError(f"{source} answered malformed protocol JSON: {problem}")
    if data.get("ok") is False:
        raise ExecutionError(
            f"{source} reported failure: {data.get('error') or 'ok: false without an error'}"
        )
    check_output(data.get("output"), source=source)


def check_output(output: Any, *, source: str) -> None:
    """A missing, blank or whitespace-only answer is an executor failure, not an empty answer."""
    if not isinstance(output, str) or not js_trim(output):
        raise ExecutionError(f"{source} {NO_OUTPUT}")


def check_mock_stats(hits: int, per_mock: Mapping[str, int], *, source: str) -> None:
    """The reference refuses mock statistics whose per-mock counts do not add up to ``hits``.

    Its result validator applies to every executor's ``mockStats``, the hook file's included, so
    an inconsistent count is an executor failure there: a ``mock_hit`` reading from it would differ.
    """
    total = sum(per_mock.values())
    if total != hits:
        raise ExecutionError(
            f'{source} returned invalid mockStats: the "perMock" counts add up to {total}, "hits" is {hits}'
        )
