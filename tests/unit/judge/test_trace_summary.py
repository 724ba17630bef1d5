"""The trace summary shown to the rubric judge."""

from __future__ import annotations

from pytest_omk.judge.trace_summary import input_preview, summarize_execution, summarize_trace
from pytest_omk.models.results import ExecutionResult, ToolCall, Turn


def call(tool: str, input: object = None, *, success: bool = True, status: str | None = None) -> ToolCall:
    return ToolCall.model_validate({"tool": tool, "input": input, "success": success, "status": status})


def test_none_without_turns_or_calls() -> None:
    assert summarize_trace(None, None) is None
    assert summarize_trace([], []) is None
    assert summarize_execution(ExecutionResult(output="hi")) is None
    assert summarize_execution(ExecutionResult(output="hi", toolCalls=[], turns=[])) is None


def test_tool_block() -> None:
    calls = [
        call("Bash", {"command": "ls -la"}),
        call("Read", {"file_path": "a.py"}),
        call("Bash", {"command": "rm x"}, success=False),
        call("Grep", "pattern", status="cancelled"),
        call("Read", None, status="unknown"),
        call("Bash", {"command": "false"}, success=False),
    ]
    assert summarize_trace(None, calls) == "\n".join(
        [
            "Tool calls: 6",
            "  succeeded 2/6",
            "  failed 2/6",
            "  cancelled 1/6",
            "  status unknown 1/6",
            "  tools used: Bash(3), Read(2), Grep(1)",
            "  failed tools: Bash",
            "  calls (for shell tools such as Bash, the command itself shows the real operation):",
            "    [1] Bash → ls -la",
            '    [2] Read → {"file_path":"a.py"}',
            "    [3] Bash [failed] → rm x",
            "    [4] Grep [cancelled] → pattern",
            "    [5] Read [status unknown] → ",
            "    [6] Bash [failed] → false",
        ]
    )


def test_optional_status_lines_are_left_out() -> None:
    text = summarize_trace(None, [call("Read", {"file_path": "x"})])
    assert text is not None
    assert "failed" not in text and "cancelled" not in text and "unknown" not in text
    assert text.splitlines()[:2] == ["Tool calls: 1", "  succeeded 1/1"]


def test_distribution_keeps_first_appearance_order() -> None:
    text = summarize_trace(None, [call("Write"), call("Bash"), call("Write"), call("Agent")])
    assert text is not None and "  tools used: Write(2), Bash(1), Agent(1)" in text.splitlines()


def test_only_first_twelve_calls_are_listed() -> None:
    text = summarize_trace(None, [call("Read", {"file_path": f"f{i}"}) for i in range(15)])
    assert text is not None
    lines = text.splitlines()
    assert sum(1 for line in lines if line.startswith("    [")) == 12
    assert lines[-1] == "    ... 3 more calls"


def test_input_preview() -> None:
    assert input_preview(call("Bash", {"command": "x" * 280})) == "x" * 280
    assert input_preview(call("Bash", {"command": "x" * 281})) == "x" * 280 + "…"
    assert input_preview(call("Edit", {"path": "é", "n": 1.0, "ok": True})) == '{"path":"é","n":1,"ok":true}'
    assert (
        input_preview(call("Edit", {"command": ["not", "a", "string"]})) == '{"command":["not","a","string"]}'
    )
    long_json = input_preview(call("Write", {"content": "y" * 400}))
    assert len(long_json) == 281 and long_json.endswith("…")
    assert input_preview(call("Read")) == ""


def test_turn_block() -> None:
    turns = [
        Turn(role="user", content="Fix the bug"),
        Turn(role="assistant", content="Looking", toolCalls=[call("Read"), call("Bash")]),
        Turn(role="tool", content="z" * 150),
        Turn(role="assistant", content="Done."),
    ]
    assert summarize_trace(turns, None) == "\n".join(
        [
            "Turn summary:",
            "  4 turns (user 1 / assistant 2 / tool 1)",
            "  [1] user: Fix the bug",
            "  [2] assistant: calls Read, Bash",
            "  [3] tool: " + "z" * 100 + "...",
            "  [4] assistant: Done.",
        ]
    )


def test_only_first_ten_turns_are_listed() -> None:
    turns = [Turn(role="assistant", content=f"step {i}") for i in range(13)]
    text = summarize_trace(turns, None)
    assert text is not None
    lines = text.splitlines()
    assert lines[-2] == "  [10] assistant: step 9"
    assert lines[-1] == "  ... 3 more turns"


def test_both_blocks_are_separated_by_a_blank_line() -> None:
    text = summarize_execution(
        ExecutionResult(toolCalls=[call("Read")], turns=[Turn(role="assistant", content="ok")])
    )
    assert text is not None
    tools, turns = text.split("\n\n")
    assert tools.startswith("Tool calls: 1") and turns.startswith("Turn summary:")
