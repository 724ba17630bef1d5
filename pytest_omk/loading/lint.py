"""``--omk-lint``: values the reference's strict loader would refuse, so a file stays runnable by omk.

The reference's loader adds rules of its own to the format (its production mode makes them hard
errors); pytest-omk accepts such files, and this lint names what would break there. Only
top-level assertions are checked, as the reference does (``assert-set`` children are exempt):

- ``contains``, ``not_contains``, ``contains_all``, ``contains_any``, ``equals``, ``not_equals``:
  each value must be a "single token": trimmed, 2 to 40 UTF-16 units long, without whitespace and
  without CJK or full-width characters (U+3000–303F, U+3400–4DBF, U+4E00–9FFF, U+FF00–FFEF);
- ``regex``: the pattern must not contain such CJK or full-width characters.

(The reference's other extra rule, ``Tool:needle`` values, is enforced by the loader itself.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from pytest_omk.js.text import JS_WHITESPACE, js_trim, utf16_len
from pytest_omk.models import AssertionBase

_CJK = re.compile("[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_TOKEN_TYPES = frozenset({"contains", "not_contains", "contains_all", "contains_any", "equals", "not_equals"})


def _token_problem(value: str) -> str | None:
    token = js_trim(value)
    if not 2 <= utf16_len(token) <= 40:
        return "is not 2 to 40 characters long after trimming"
    if any(char in JS_WHITESPACE for char in token):
        return "contains whitespace"
    if _CJK.search(token):
        return "contains a CJK or full-width character"
    return None


def _problems(assertion: AssertionBase) -> Iterator[str]:
    kind = str(getattr(assertion, "type", ""))
    if kind in _TOKEN_TYPES:
        values = getattr(assertion, "values", None) or [getattr(assertion, "value", "")]
        for value in values:
            problem = _token_problem(str(value))
            if problem is not None:
                yield f"{kind} value {value!r} {problem}: the reference accepts only a single token"
    elif kind == "regex" and _CJK.search(str(getattr(assertion, "pattern", ""))):
        yield f"regex pattern {getattr(assertion, 'pattern', '')!r} contains a CJK or full-width character"


def portability_warnings(sample_id: str, assertions: Sequence[AssertionBase]) -> list[str]:
    """One message per assertion value of ``sample_id`` the reference's strict loader refuses."""
    return [
        f"{sample_id}: assertions[{index}]: {problem} (omk would not load this file)"
        for index, assertion in enumerate(assertions)
        for problem in _problems(assertion)
    ]
