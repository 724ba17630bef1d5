"""Agent-trace, mock, turn and telemetry assertions, including missing evidence."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.grade.agent import split_tool_needle, tool_calls
from pytest_omk.models.results import ExecutionResult
from tests.support.grading import read

TRACE: dict[str, Any] = {
    "toolCalls": [
        {"tool": "Bash", "input": {"command": "ls -la"}, "output": "README.md\nsetup.py"},
        {"tool": "Read", "input": {"file_path": "/src/app.py", "limit": 10.0}, "output": {"lines": 10}},
        {"tool": "save_observation", "input": {"note": "中文 ok", "confirmedByUser": True}, "output": None},
        {"tool": "Bash", "input": None, "output": ["a", 1]},
    ]
}


def check(assertion: dict[str, Any], **execution: Any) -> str:
    fields = execution or TRACE
    return read(assertion, "final answer", **fields).status


@pytest.mark.parametrize(
    ("assertion", "expected"),
    [
        ({"type": "tools_called", "values": ["bash", "READ"]}, "pass"),
        ({"type": "tools_called", "values": ["Bash", "Edit"]}, "fail"),
        ({"type": "tools_not_called", "values": ["Edit", "Write"]}, "pass"),
        ({"type": "tools_not_called", "values": ["edit", "read"]}, "fail"),
        ({"type": "tools_count_min", "value": 4}, "pass"),
        ({"type": "tools_count_max", "value": 3}, "fail"),
        ({"type": "tool_output_contains", "value": "bash:SETUP.PY"}, "pass"),
        ({"type": "tool_output_contains", "value": "Read:lines"}, "fail"),
        # An object output stringifies as "[object Object]", exactly as upstream.
        ({"type": "tool_output_contains", "value": "Read:[object Object]"}, "pass"),
        ({"type": "tool_output_contains", "value": "Bash:a,1"}, "pass"),  # String(["a", 1])
        ({"type": "tool_input_contains", "value": 'save_observation:"confirmedByUser":true'}, "pass"),
        ({"type": "tool_input_contains", "value": 'Read:"limit":10}'}, "pass"),  # 10.0 prints as 10
        ({"type": "tool_input_contains", "value": 'Read:"file_path":"/src/'}, "pass"),
        ({"type": "tool_input_contains", "value": 'save_observation:"note":"中文'}, "pass"),  # raw non-ASCII
        ({"type": "tool_input_contains", "value": 'Bash:""'}, "pass"),  # null input stringifies as '""'
        ({"type": "tool_input_contains", "value": "Edit:ls"}, "fail"),  # no such tool
        ({"type": "tool_input_not_contains", "value": "Bash:rm -rf"}, "pass"),
        ({"type": "tool_input_not_contains", "value": "bash:LS -LA"}, "fail"),
    ],
)
def test_trace_assertions(assertion: dict[str, Any], expected: str) -> None:
    assert check(assertion) == expected


def test_tool_needle_splits_at_the_first_colon_only() -> None:
    assert split_tool_needle('save_observation:"a":{"b":1}') == ("save_observation", '"a":{"b":1}')
    url_call = {"toolCalls": [{"tool": "WebFetch", "input": {"url": "https://x.test:8080/a"}}]}
    assert (
        check({"type": "tool_input_contains", "value": "WebFetch:https://x.test:8080"}, **url_call) == "pass"
    )


@pytest.mark.parametrize(
    "assertion",
    [
        {"type": "tools_called", "values": ["Bash"]},
        {"type": "tools_not_called", "values": ["Bash"]},
        {"type": "tools_count_min", "value": 0},
        {"type": "tools_count_max", "value": 10},
        {"type": "tool_output_contains", "value": "Bash:x"},
        {"type": "tool_input_contains", "value": "Bash:x"},
        {"type": "tool_input_not_contains", "value": "Bash:x"},
    ],
)
def test_every_tool_assertion_is_missing_without_a_trace(assertion: dict[str, Any]) -> None:
    reading = read({**assertion, "not": True}, "answer")  # not never inverts missing evidence
    assert reading.status == "missing"
    assert "no tool trace" in reading.message


def test_an_empty_trace_is_evidence_of_no_tool_use() -> None:
    assert check({"type": "tools_not_called", "values": ["Bash"]}, toolCalls=[]) == "pass"
    assert check({"type": "tools_count_max", "value": 0}, toolCalls=[]) == "pass"
    assert check({"type": "tools_called", "values": ["Bash"]}, toolCalls=[]) == "fail"


def test_tool_calls_are_read_only_from_tool_calls_never_from_turns() -> None:
    # The reference reads toolCalls only: calls recorded on turns alone are no trace.
    turns = [{"role": "assistant", "content": "", "toolCalls": [{"tool": "Grep", "input": {"pattern": "x"}}]}]
    assert tool_calls(ExecutionResult.model_validate({"turns": turns})) == []
    assert check({"type": "tools_called", "values": ["grep"]}, turns=turns) == "missing"


@pytest.mark.parametrize(
    ("runtime", "declared"),
    [
        ("exec_command", "Bash"),
        ("shell", "Bash"),
        ("apply_patch", "Edit"),
        ("mcp__docs__fetch_doc", "docs.fetch_doc"),
    ],
)
def test_every_executors_trace_is_normalized_before_matching(runtime: str, declared: str) -> None:
    # A command or HTTP executor's trace carries the runtime's names; assertions use canonical ones.
    calls = [{"tool": runtime, "input": {"command": "ls"}, "success": True}]
    assert check({"type": "tools_called", "values": [declared]}, toolCalls=calls) == "pass"
    assert check({"type": "tool_input_contains", "value": f"{declared}:ls"}, toolCalls=calls) == "pass"


def test_trace_failure_messages_quote_expectation_and_evidence() -> None:
    missing_tool = read({"type": "tools_called", "values": ["Edit"]}, "", **TRACE)
    assert missing_tool.message.startswith("expected the tools ['Edit'] to be called; not called: ['Edit']")
    assert "'Bash', 'Read', 'save_observation'" in missing_tool.message
    needle = read({"type": "tool_output_contains", "value": "Bash:error"}, "", **TRACE)
    assert needle.message.startswith(
        "expected a Bash call whose output contains 'error'; Bash outputs: 'README.md"
    )
    forbidden = read({"type": "tool_input_not_contains", "value": "Bash:ls"}, "", **TRACE)
    assert (
        forbidden.message
        == "expected no Bash call whose input contains 'ls'; found: '{\"command\":\"ls -la\"}'"
    )


MOCKS = {
    "mocks": [
        {"tool": "Read", "return": "x"},
        {"tool": "Bash", "return": "y"},
        {"tool": "Bash", "return": "z"},
    ]
}


@pytest.mark.parametrize(
    ("assertion", "per_mock", "expected"),
    [
        ({"type": "mock_hit", "value": "Read:1"}, {"Read:1": 1}, "pass"),
        ({"type": "mock_hit", "value": "Bash:2"}, {"Bash:1": 3}, "fail"),
        ({"type": "mock_hit", "value": "Bash:1", "threshold": 3}, {"Bash:1": 2}, "fail"),
        ({"type": "mock_hit", "value": "Bash:1", "threshold": 2}, {"Bash:1": 2}, "pass"),
    ],
)
def test_mock_hit(assertion: dict[str, Any], per_mock: dict[str, int], expected: str) -> None:
    stats = {"hits": sum(per_mock.values()), "misses": 0, "perMock": per_mock}
    assert read(assertion, "", sample_fields=MOCKS, mockStats=stats).status == expected


def test_mock_hit_without_mock_statistics_is_missing() -> None:
    reading = read({"type": "mock_hit", "value": "Read:1", "not": True}, "", sample_fields=MOCKS, **TRACE)
    assert reading.status == "missing"
    assert "mockStats" in reading.message


@pytest.mark.parametrize(
    ("assertion", "turns", "expected"),
    [
        ({"type": "turns_min", "value": 2}, 2, "pass"),
        ({"type": "turns_min", "value": 3}, 2, "fail"),
        ({"type": "turns_max", "value": 5}, 5, "pass"),
        ({"type": "turns_max", "value": 4}, 5, "fail"),
    ],
)
def test_turns(assertion: dict[str, Any], turns: int, expected: str) -> None:
    assert read(assertion, "", numTurns=turns).status == expected


@pytest.mark.parametrize("kind", ["turns_min", "turns_max"])
def test_turns_without_a_reported_count_are_missing(kind: str) -> None:
    reading = read({"type": kind, "value": 1}, "", **TRACE)
    assert reading.status == "missing"
    assert "numTurns" in reading.message


@pytest.mark.parametrize(
    ("assertion", "execution", "expected"),
    [
        ({"type": "cost_max", "value": 0.01}, {"costUSD": 0.01}, "pass"),
        ({"type": "cost_max", "value": 0.01}, {"costUSD": 0.0100001}, "fail"),
        ({"type": "cost_max", "value": 0}, {"costUSD": 0}, "pass"),
        ({"type": "latency_max", "value": 2000}, {"latencyMs": 1999.5}, "pass"),
        ({"type": "latency_max", "value": 2000}, {"latencyMs": 2500}, "fail"),
    ],
)
def test_telemetry(assertion: dict[str, Any], execution: dict[str, Any], expected: str) -> None:
    assert read(assertion, "", **execution).status == expected


def test_unreported_cost_and_latency_are_missing_not_failures() -> None:
    cost = read({"type": "cost_max", "value": 1, "not": True}, "")
    latency = read({"type": "latency_max", "value": 1}, "", durationApiMs=5)
    assert (cost.status, latency.status) == ("missing", "missing")
    assert "costUSD" in cost.message
    assert "latencyMs" in latency.message


def test_telemetry_failure_message() -> None:
    reading = read({"type": "cost_max", "value": 0.5}, "", costUSD=0.75)
    assert reading.message == "expected a cost of at most $0.5; the call cost $0.75"


def test_tool_names_and_needles_lower_case_as_javascript_does() -> None:
    # U+A7DC (Unicode 16) lower-cases to U+019B in V8 (the reference's toLowerCase); Python 3.11's
    # str.lower leaves it as it is, so these would fail with Python's case rules.
    assert "\ua7dc".lower() == "\ua7dc"
    trace = {"toolCalls": [{"tool": "x\ua7dc", "input": {"command": "echo \ua7dc"}, "output": "\ua7dc!"}]}
    assert check({"type": "tools_called", "values": ["X\u019b"]}, **trace) == "pass"
    assert check({"type": "tools_not_called", "values": ["x\u019b"]}, **trace) == "fail"
    assert check({"type": "tool_input_contains", "value": "x\u019b:echo \u019b"}, **trace) == "pass"
    assert check({"type": "tool_output_contains", "value": "x\ua7dc:\u019b!"}, **trace) == "pass"
    assert check({"type": "tool_input_not_contains", "value": "x\u019b:\u019b"}, **trace) == "fail"
