"""A compact English summary of an agent's trace, shown to the rubric judge.

The judge needs to know what the agent did (which tools, how often, what failed, what it ran)
without reading a full transcript that may be far longer than the answer itself. The summary has
the shape of the format owner's (semantics §10.3): tool counts and status breakdown, the tool
distribution in order of first use, the failed tools, the first 12 calls with an input preview,
then a summary of the first 10 turns. Its wording is ours.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from pytest_omk.js.text import js_json_stringify
from pytest_omk.models.results import ExecutionResult, ToolCall, Turn

INPUT_PREVIEW_MAX = 280
"""Characters of a tool input shown before it is cut with ``…``."""
TURN_PREVIEW_MAX = 100
"""Characters of a turn's content shown before it is cut with ``...``."""
MAX_CALLS = 12
"""Tool calls listed one by one; the rest are counted."""
MAX_TURNS = 10
"""Turns listed one by one; the rest are counted."""

_STATUS_LABELS = {
    "success": "",
    "failure": " [failed]",
    "cancelled": " [cancelled]",
    "unknown": " [status unknown]",
}


def prompt_mask(calls: object) -> Callable[[str], str]:
    """The run's masking of known secrets, from the recording store the judge's calls go through
    (identity without one): the judge's prompt quotes the output, which may echo the credentials
    of the model under test's provider, and the judge's provider must not receive them."""
    store = getattr(calls, "store", None)
    masked: Callable[[str], str] | None = getattr(store, "masked", None)
    return masked if masked is not None else str


def input_preview(call: ToolCall, mask: Callable[[str], str] = str) -> str:
    """The call's input as one line: a shell ``command`` as is, anything else as compact JSON;
    masked whole (``mask``) before it is cut."""
    value = call.input
    if value is None:
        return ""
    if isinstance(value, dict) and isinstance(value.get("command"), str):
        text: str = value["command"]
    elif isinstance(value, str):
        text = value
    else:
        text = js_json_stringify(value)
    text = mask(text)
    return text[:INPUT_PREVIEW_MAX] + "…" if len(text) > INPUT_PREVIEW_MAX else text


def _tool_lines(calls: Sequence[ToolCall], mask: Callable[[str], str]) -> list[str]:
    total = len(calls)
    statuses = Counter(call.effective_status for call in calls)
    lines = [f"Tool calls: {total}", f"  succeeded {statuses['success']}/{total}"]
    for status, label in (("failure", "failed"), ("cancelled", "cancelled"), ("unknown", "status unknown")):
        if statuses[status]:
            lines.append(f"  {label} {statuses[status]}/{total}")
    # Counter keeps insertion order, which is the order in which each tool was first used.
    distribution = Counter(call.tool for call in calls)
    lines.append("  tools used: " + ", ".join(f"{tool}({count})" for tool, count in distribution.items()))
    failed = dict.fromkeys(call.tool for call in calls if call.effective_status == "failure")
    if failed:
        lines.append("  failed tools: " + ", ".join(failed))
    # Agents often reach real services through a shell, so the command line is what says what a
    # Bash call actually did; the judge is told to read it rather than count "Bash" calls.
    lines.append("  calls (for shell tools such as Bash, the command itself shows the real operation):")
    for number, call in enumerate(calls[:MAX_CALLS], 1):
        label = _STATUS_LABELS.get(call.effective_status, "")
        lines.append(f"    [{number}] {call.tool}{label} → {input_preview(call, mask)}")
    if total > MAX_CALLS:
        lines.append(f"    ... {total - MAX_CALLS} more calls")
    return lines


def _turn_line(number: int, turn: Turn, mask: Callable[[str], str]) -> str:
    if turn.role == "assistant" and turn.toolCalls:
        return f"  [{number}] assistant: calls {', '.join(call.tool for call in turn.toolCalls)}"
    content = mask(turn.content)  # whole, before the preview is cut
    preview = content[:TURN_PREVIEW_MAX] + ("..." if len(content) > TURN_PREVIEW_MAX else "")
    return f"  [{number}] {turn.role}: {preview}"


def _turn_lines(turns: Sequence[Turn], mask: Callable[[str], str]) -> list[str]:
    roles = Counter(turn.role for turn in turns)
    lines = [
        "Turn summary:",
        f"  {len(turns)} turns (user {roles['user']} / assistant {roles['assistant']} / tool {roles['tool']})",
    ]
    lines += [_turn_line(number, turn, mask) for number, turn in enumerate(turns[:MAX_TURNS], 1)]
    if len(turns) > MAX_TURNS:
        lines.append(f"  ... {len(turns) - MAX_TURNS} more turns")
    return lines


def summarize_trace(
    turns: Sequence[Turn] | None, tool_calls: Sequence[ToolCall] | None, mask: Callable[[str], str] = str
) -> str | None:
    """The trace summary, or ``None`` when there are neither turns nor tool calls; every quoted
    text is masked whole (``mask``) before its preview is cut."""
    if not turns and not tool_calls:
        return None
    blocks: list[str] = []
    if tool_calls:
        blocks.append("\n".join(_tool_lines(tool_calls, mask)))
    if turns:
        blocks.append("\n".join(_turn_lines(turns, mask)))
    return "\n\n".join(blocks)


def summarize_execution(execution: ExecutionResult, mask: Callable[[str], str] = str) -> str | None:
    """:func:`summarize_trace` of an execution's turns and tool calls."""
    return summarize_trace(execution.turns, execution.toolCalls, mask)
