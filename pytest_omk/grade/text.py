"""Graders for checks on the output text: substrings, equality, regex, length and word count.

Case-insensitive comparisons lower-case both sides with V8's ``toLowerCase`` and ``regex`` runs in
V8 (the context's engine), so both follow JavaScript's current Unicode rules exactly; lengths count
UTF-16 code units; nothing is trimmed except by ``equals`` / ``not_equals`` (JavaScript ``trim``).
"""

from __future__ import annotations

from pytest_omk.grade._table import entry
from pytest_omk.grade.base import GradeContext, Grader, excerpt
from pytest_omk.js.text import js_number, js_trim, js_words, utf16_len
from pytest_omk.js.v8 import JsTimeout
from pytest_omk.models import AssertionBase
from pytest_omk.models.assertions import (
    Contains,
    ContainsAll,
    ContainsAny,
    EndsWith,
    Equals,
    MaxLength,
    MinLength,
    NotContains,
    NotEquals,
    Regex,
    StartsWith,
    WordCountMax,
    WordCountMin,
)
from pytest_omk.models.results import Reading


def near(ctx: GradeContext, needle: str, margin: int = 30) -> str:
    """A quoted excerpt of the output around ``needle``, with ellipses where cut.

    The output is masked whole first and the needle found again in the masked text (case folded
    by Python: a message needs no V8 precision); a needle inside a masked secret shows the start.
    """
    text = ctx.mask(ctx.output)
    start = text.lower().find(needle.lower())
    if start < 0:
        return excerpt(text)
    size = len(needle)
    lo, hi = max(0, start - margin), min(len(text), start + size + margin)
    piece = ("…" if lo > 0 else "") + text[lo:hi] + ("…" if hi < len(text) else "")
    return excerpt(piece, limit=size + 2 * margin + 2)


def _lowered(ctx: GradeContext, *values: str) -> tuple[str, list[str]]:
    """The output and ``values`` lower-cased by ``toLowerCase``, in one evaluation."""
    output, *rest = ctx.engine.lower(ctx.output, *values)
    return output, rest


def _find(ctx: GradeContext, value: str) -> int:
    """Index of ``value`` in the output, ignoring case; -1 when absent."""
    output, (wanted,) = _lowered(ctx, value)
    return output.find(wanted)


def _contains(a: Contains, ctx: GradeContext) -> Reading:
    at = _find(ctx, a.value)
    if at >= 0:
        return Reading.passed(f"the output contains {a.value!r} near {near(ctx, a.value)}")
    return Reading.failed(f"expected the output to contain {a.value!r}; output: {ctx.quote(ctx.output)}")


def _not_contains(a: NotContains, ctx: GradeContext) -> Reading:
    at = _find(ctx, a.value)
    if at < 0:
        return Reading.passed(f"the output does not contain {a.value!r}")
    return Reading.failed(f"expected the output not to contain {a.value!r}; found near {near(ctx, a.value)}")


def _starts_with(a: StartsWith, ctx: GradeContext) -> Reading:
    output, (wanted,) = _lowered(ctx, a.value)
    if output.startswith(wanted):
        return Reading.passed(f"the output starts with {a.value!r}")
    return Reading.failed(f"expected the output to start with {a.value!r}; output: {ctx.quote(ctx.output)}")


def _ends_with(a: EndsWith, ctx: GradeContext) -> Reading:
    output, (wanted,) = _lowered(ctx, a.value)
    if output.endswith(wanted):
        return Reading.passed(f"the output ends with {a.value!r}")
    whole = ctx.mask(ctx.output)  # masked before the tail is cut
    shown = excerpt(("…" if len(whole) > 60 else "") + whole[-60:])
    return Reading.failed(f"expected the output to end with {a.value!r}; output ends: {shown}")


def _equals(a: Equals, ctx: GradeContext) -> Reading:
    if js_trim(ctx.output) == js_trim(a.value):
        return Reading.passed(f"the trimmed output equals {excerpt(js_trim(a.value))}")
    return Reading.failed(
        f"expected the trimmed output to equal {excerpt(js_trim(a.value))}; output: {ctx.quote(ctx.output)}"
    )


def _not_equals(a: NotEquals, ctx: GradeContext) -> Reading:
    if js_trim(ctx.output) != js_trim(a.value):
        return Reading.passed(f"the trimmed output differs from {excerpt(js_trim(a.value))}")
    return Reading.failed(
        f"expected the trimmed output to differ from {excerpt(js_trim(a.value))}, but it is equal"
    )


def _contains_all(a: ContainsAll, ctx: GradeContext) -> Reading:
    output, wanted = _lowered(ctx, *a.values)
    absent = [v for v, w in zip(a.values, wanted, strict=True) if w not in output]
    if not absent:
        return Reading.passed(f"the output contains all of {a.values!r}")
    return Reading.failed(
        f"expected the output to contain all of {a.values!r}; missing {absent!r}; output: {ctx.quote(ctx.output)}"
    )


def _contains_any(a: ContainsAny, ctx: GradeContext) -> Reading:
    output, wanted = _lowered(ctx, *a.values)
    for value, lowered in zip(a.values, wanted, strict=True):
        at = output.find(lowered)
        if at >= 0:
            return Reading.passed(f"the output contains {value!r} near {near(ctx, value)}")
    return Reading.failed(
        f"expected the output to contain any of {a.values!r}; output: {ctx.quote(ctx.output)}"
    )


def _regex(a: Regex, ctx: GradeContext) -> Reading:
    shown = f"/{a.pattern}/{a.effective_flags}"
    try:
        found = ctx.engine.search(a.pattern, a.effective_flags, ctx.output)
    except JsTimeout as exc:
        return Reading.error(f"regex {shown} was not decided: {exc}")
    except ValueError as exc:  # loaded without an engine: the translator accepted what V8 refuses
        return Reading.error(f"regex {shown} does not compile as JavaScript: {exc}")
    if found is not None:
        at = near(ctx, ctx.output[found.start : found.end])
        return Reading.passed(f"the output matches {shown} at {at}")
    return Reading.failed(f"expected the output to match {shown}; output: {ctx.quote(ctx.output)}")


def _bound(kind: str, measured: int, limit: float, at_least: bool, shown: str) -> Reading:
    ok = measured >= limit if at_least else measured <= limit
    relation = "at least" if at_least else "at most"
    if ok:
        return Reading.passed(f"{measured} {kind} ({relation} {js_number(limit)})")
    return Reading.failed(f"expected {relation} {js_number(limit)} {kind}; got {measured}: {shown}")


_CHARS = "characters (UTF-16 code units)"


def _min_length(a: MinLength, ctx: GradeContext) -> Reading:
    return _bound(_CHARS, utf16_len(ctx.output), a.value, True, ctx.quote(ctx.output))


def _max_length(a: MaxLength, ctx: GradeContext) -> Reading:
    return _bound(_CHARS, utf16_len(ctx.output), a.value, False, ctx.quote(ctx.output))


def _word_count_min(a: WordCountMin, ctx: GradeContext) -> Reading:
    return _bound("words", len(js_words(ctx.output)), a.value, True, ctx.quote(ctx.output))


def _word_count_max(a: WordCountMax, ctx: GradeContext) -> Reading:
    return _bound("words", len(js_words(ctx.output)), a.value, False, ctx.quote(ctx.output))


GRADERS: dict[type[AssertionBase], Grader] = dict(
    [
        entry(Contains, _contains),
        entry(NotContains, _not_contains),
        entry(StartsWith, _starts_with),
        entry(EndsWith, _ends_with),
        entry(Equals, _equals),
        entry(NotEquals, _not_equals),
        entry(ContainsAll, _contains_all),
        entry(ContainsAny, _contains_any),
        entry(Regex, _regex),
        entry(MinLength, _min_length),
        entry(MaxLength, _max_length),
        entry(WordCountMin, _word_count_min),
        entry(WordCountMax, _word_count_max),
    ]
)
"""Text assertion graders, keyed by assertion class."""
