"""Graders for agent behaviour: which tools were called, with what, how often, mocks and turns.

Tool names and the needles of ``tool_*_contains`` compare case-insensitively: both sides are
lower-cased by V8's ``toLowerCase`` (the grading context's engine), as the reference does. When the executor
reported no tool trace at all, every tool assertion is missing evidence rather than a failure: an
answer without a trace says nothing about the tools the model used. Likewise ``mock_hit`` without
mock statistics and ``turns_*`` without a reported turn count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pytest_omk.grade._table import entry
from pytest_omk.grade.base import GradeContext, Grader
from pytest_omk.js.text import js_json_stringify, js_number, js_string, js_truthy
from pytest_omk.models import AssertionBase
from pytest_omk.models.assertions import (
    MockHit,
    ToolInputContains,
    ToolInputNotContains,
    ToolOutputContains,
    ToolsCalled,
    ToolsCountMax,
    ToolsCountMin,
    ToolsNotCalled,
    TurnsMax,
    TurnsMin,
)
from pytest_omk.models.results import ExecutionResult, Reading, ToolCall

A = TypeVar("A", bound=AssertionBase)
Lower = Callable[..., list[str]]
"""``toLowerCase()`` of each argument, in one V8 evaluation (:meth:`JsEngine.lower`)."""
NO_TRACE = "the executor reported no tool trace (toolCalls), so tool use cannot be checked"


def tool_calls(execution: ExecutionResult) -> list[ToolCall]:
    """Every tool call of the trace: ``toolCalls`` only (calls on ``turns`` are not read)."""
    return list(execution.toolCalls or [])


def _needs_trace(
    grader: Callable[[A, list[ToolCall], GradeContext], Reading],
) -> Callable[[A, GradeContext], Reading]:
    """Wrap a grader of the tool-call list so it reads missing when there is no trace."""

    def graded(a: A, ctx: GradeContext) -> Reading:
        if not ctx.execution.has_trace():
            return Reading.missing(NO_TRACE, "no-trace")
        return grader(a, tool_calls(ctx.execution), ctx)

    return graded


def _names(calls: list[ToolCall]) -> list[str]:
    return list(dict.fromkeys(call.tool for call in calls))


def _called(names: list[str], calls: list[ToolCall], lower: Lower) -> list[bool]:
    """For each of ``names``, whether a call's tool has the same ``toLowerCase()``."""
    lowered = lower(*names, *(call.tool for call in calls))
    seen = set(lowered[len(names) :])
    return [name in seen for name in lowered[: len(names)]]


def _tools_called(a: ToolsCalled, calls: list[ToolCall], ctx: GradeContext) -> Reading:
    called_each = _called(a.values, calls, ctx.engine.lower)
    absent = [name for name, called in zip(a.values, called_each, strict=True) if not called]
    if not absent:
        return Reading.passed(f"called {a.values!r}")
    return Reading.failed(
        f"expected the tools {a.values!r} to be called; not called: {absent!r}; tools called: {_names(calls)!r}"
    )


def _tools_not_called(a: ToolsNotCalled, calls: list[ToolCall], ctx: GradeContext) -> Reading:
    called_each = _called(a.values, calls, ctx.engine.lower)
    present = [name for name, called in zip(a.values, called_each, strict=True) if called]
    if not present:
        return Reading.passed(f"none of {a.values!r} was called")
    return Reading.failed(f"expected the tools {a.values!r} not to be called; called: {present!r}")


def _count(
    a: ToolsCountMin | ToolsCountMax, calls: list[ToolCall], ctx: GradeContext, at_least: bool
) -> Reading:
    n = len(calls)
    relation = "at least" if at_least else "at most"
    if (n >= a.value) if at_least else (n <= a.value):
        return Reading.passed(f"{n} tool calls ({relation} {js_number(a.value)})")
    return Reading.failed(
        f"expected {relation} {js_number(a.value)} tool calls; got {n}: {ctx.quote(repr(_names(calls)))}"
    )


def _tools_count_min(a: ToolsCountMin, calls: list[ToolCall], ctx: GradeContext) -> Reading:
    return _count(a, calls, ctx, at_least=True)


def _tools_count_max(a: ToolsCountMax, calls: list[ToolCall], ctx: GradeContext) -> Reading:
    return _count(a, calls, ctx, at_least=False)


def split_tool_needle(value: str) -> tuple[str, str]:
    """Split ``Tool:needle`` at the first colon; the needle keeps any further colons."""
    tool, _, needle = value.partition(":")
    return tool, needle


def _output_haystack(call: ToolCall) -> str:
    # String(call.output || ''): objects read "[object Object]", exactly as upstream.
    return js_string(call.output) if js_truthy(call.output) else ""


def _input_haystack(call: ToolCall) -> str:
    # JSON.stringify(call.input || ''): a falsy input stringifies as '""'.
    return js_json_stringify(call.input if js_truthy(call.input) else "")


def _matching(
    value: str, calls: list[ToolCall], haystack: Callable[[ToolCall], str], lower: Lower
) -> tuple[list[str], str | None]:
    """Haystacks of the calls of the named tool, and the first one containing the needle."""
    tool, needle = split_tool_needle(value)
    texts = [haystack(call) for call in calls]
    wanted, lowered_needle, *rest = lower(tool, needle, *(call.tool for call in calls), *texts)
    names, lowered_texts = rest[: len(calls)], rest[len(calls) :]
    mine = [
        (text, low) for text, name, low in zip(texts, names, lowered_texts, strict=True) if name == wanted
    ]
    hit = next((text for text, low in mine if lowered_needle in low), None)
    return [text for text, _ in mine], hit


def _not_seen(value: str, kind: str, texts: list[str], calls: list[ToolCall], ctx: GradeContext) -> str:
    tool, needle = split_tool_needle(value)
    if not texts:
        return f"expected a {tool} call whose {kind} contains {needle!r}; no {tool} call (tools called: {_names(calls)!r})"
    return f"expected a {tool} call whose {kind} contains {needle!r}; {tool} {kind}s: {ctx.quote(' | '.join(texts))}"


def _tool_output_contains(a: ToolOutputContains, calls: list[ToolCall], ctx: GradeContext) -> Reading:
    texts, hit = _matching(a.value, calls, _output_haystack, ctx.engine.lower)
    if hit is not None:
        return Reading.passed(f"a call's output contains the needle: {ctx.quote(hit)}")
    return Reading.failed(_not_seen(a.value, "output", texts, calls, ctx))


def _tool_input_contains(a: ToolInputContains, calls: list[ToolCall], ctx: GradeContext) -> Reading:
    texts, hit = _matching(a.value, calls, _input_haystack, ctx.engine.lower)
    if hit is not None:
        return Reading.passed(f"a call's input contains the needle: {ctx.quote(hit)}")
    return Reading.failed(_not_seen(a.value, "input", texts, calls, ctx))


def _tool_input_not_contains(a: ToolInputNotContains, calls: list[ToolCall], ctx: GradeContext) -> Reading:
    tool, needle = split_tool_needle(a.value)
    _, hit = _matching(a.value, calls, _input_haystack, ctx.engine.lower)
    if hit is None:
        return Reading.passed(f"no {tool} call's input contains {needle!r}")
    return Reading.failed(f"expected no {tool} call whose input contains {needle!r}; found: {ctx.quote(hit)}")


def _mock_hit(a: MockHit, ctx: GradeContext) -> Reading:
    stats = ctx.execution.mockStats
    if stats is None:
        return Reading.missing("the executor reported no mock statistics (mockStats)", "no-telemetry")
    hits = stats.perMock.get(a.value, 0)
    if hits >= a.threshold:
        return Reading.passed(f"mock {a.value!r} was hit {hits} times (at least {js_number(a.threshold)})")
    return Reading.failed(
        f"expected mock {a.value!r} to be hit at least {js_number(a.threshold)} times; hits: {hits} "
        f"(per mock: {ctx.quote(repr(stats.perMock))})"
    )


def _turns(a: TurnsMin | TurnsMax, ctx: GradeContext, at_least: bool) -> Reading:
    turns = ctx.execution.numTurns
    if turns is None:
        return Reading.missing("the executor reported no turn count (numTurns)", "no-telemetry")
    relation = "at least" if at_least else "at most"
    if (turns >= a.value) if at_least else (turns <= a.value):
        return Reading.passed(f"{turns} turns ({relation} {js_number(a.value)})")
    return Reading.failed(f"expected {relation} {js_number(a.value)} turns; the executor reported {turns}")


def _turns_min(a: TurnsMin, ctx: GradeContext) -> Reading:
    return _turns(a, ctx, at_least=True)


def _turns_max(a: TurnsMax, ctx: GradeContext) -> Reading:
    return _turns(a, ctx, at_least=False)


GRADERS: dict[type[AssertionBase], Grader] = dict(
    [
        entry(ToolsCalled, _needs_trace(_tools_called)),
        entry(ToolsNotCalled, _needs_trace(_tools_not_called)),
        entry(ToolsCountMin, _needs_trace(_tools_count_min)),
        entry(ToolsCountMax, _needs_trace(_tools_count_max)),
        entry(ToolOutputContains, _needs_trace(_tool_output_contains)),
        entry(ToolInputContains, _needs_trace(_tool_input_contains)),
        entry(ToolInputNotContains, _needs_trace(_tool_input_not_contains)),
        entry(MockHit, _mock_hit),
        entry(TurnsMin, _turns_min),
        entry(TurnsMax, _turns_max),
    ]
)
"""Agent-trace graders, keyed by assertion class."""
