"""Read a judge's reply: a score 1-5 and a reason, or a defect saying why the reply is unusable.

Two rules, as the format's owner applies them (semantics §9.3, §10.4):

- a rubric dimension's reply must be a JSON object and nothing else once trimmed: a code fence or
  a sentence around the object makes it invalid;
- a judge-scored assertion's reply may wrap the object: the text from the first ``{`` to the last
  ``}`` is parsed.

Either way ``score`` must be a JSON number that is an integer from 1 to 5 (``"4"``, ``4.5``,
``true`` are rejected; ``4.0`` is the number 4, as in JavaScript) and ``reason`` a non-blank
string. An unusable reply is missing evidence, never a score of 0 and never a pass, so the caller
gets a defect message to report instead of a number.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NamedTuple

from pytest_omk.js.text import js_json_stringify, js_number, js_trim

NOT_JSON = "judge reply is not JSON"
MALFORMED = "judge reply is malformed JSON"
WRAPPED = "judge reply: fenced or wrapped JSON is not accepted for a rubric dimension"
NOT_OBJECT = "judge reply: JSON is not an object"
NO_SCORE = "judge reply: score is missing"
NO_REASON = "judge reply: reason is missing or blank"

# First "{" to last "}", across lines: the object inside a fence or after a preamble.
_OBJECT_SPAN = re.compile(r"\{[\s\S]*\}")


class JudgeReply(NamedTuple):
    """A usable reply."""

    score: int
    reason: str


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN and Infinity; JSON.parse, and so the judge protocol, does not.
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def _score(value: Any) -> int | str:
    """The integer score, or a defect."""
    # JSON.stringify would print an overflowed 1e400 as "null"; say "Infinity" as JavaScript does.
    shown = js_number(value) if isinstance(value, float) else js_json_stringify(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"judge reply: score {shown} is not an integer 1-5"
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return f"judge reply: score {shown} is not an integer 1-5"
    if not 1 <= value <= 5:
        return f"judge reply: score {shown} is outside the range 1-5"
    return int(value)


def _validate(data: Any) -> JudgeReply | str:
    if not isinstance(data, dict):
        return NOT_OBJECT
    if "score" not in data:
        return NO_SCORE
    score = _score(data["score"])
    if isinstance(score, str):
        return score
    reason = data.get("reason")
    if not isinstance(reason, str) or not js_trim(reason):
        return NO_REASON
    return JudgeReply(score, js_trim(reason))


QUOTED = 120
"""Characters of an unusable reply quoted in its defect message."""


def quote_reply(text: str) -> str:
    """A judge's reply quoted for a message: as it came (spacing kept, escapes shown), cut short."""
    return repr(text if len(text) <= QUOTED else text[: QUOTED - 1] + "…")


def parse_rubric_reply(text: str) -> JudgeReply | str:
    """Parse a rubric dimension's reply: the whole trimmed text must be one JSON object."""
    text = js_trim(text)
    if "{" not in text:
        return NOT_JSON
    try:
        data = _loads(text)
    except (ValueError, RecursionError):
        # Say why when the object itself is fine but something surrounds it: that is the common
        # mistake (a markdown fence), and "malformed" alone would send the user looking for a typo.
        match = _OBJECT_SPAN.search(text)
        if match is not None and match.group(0) != text:
            try:
                _loads(match.group(0))
            except (ValueError, RecursionError):
                return MALFORMED
            return WRAPPED
        return MALFORMED
    return _validate(data)


def parse_assertion_reply(text: str) -> JudgeReply | str:
    """Parse a judge-scored assertion's reply: the first ``{`` to the last ``}`` is the object."""
    match = _OBJECT_SPAN.search(js_trim(text))
    if match is None:
        return NOT_JSON
    try:
        data = _loads(match.group(0))
    except (ValueError, RecursionError):
        return MALFORMED
    return _validate(data)
