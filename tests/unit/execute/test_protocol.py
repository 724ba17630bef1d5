"""The command protocol as the reference reads it: refused answers, blank output, extra fields, mocks."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.errors import ExecutionError
from pytest_omk.execute.local import CommandExecutor, parse_result
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest

CALL = {"tool": "Bash", "input": {"command": "ls"}, "output": "a", "success": True}


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ({"output": "x", "toolCalls": [{"tool": "Bash", "input": {}}]}, "success must be a boolean"),
        ({"output": "x", "toolCalls": [{**CALL, "status": "failure"}]}, "contradicts success"),
        (
            {"output": "x", "turns": [{"role": "assistant", "content": "", "toolCalls": [{"tool": " "}]}]},
            "tool must be",
        ),
        ({"output": "x", "costUSD": -0.01}, '"costUSD" must be a non-negative'),
        ({"output": "x", "numTurns": 1.5}, '"numTurns" must be a non-negative whole number'),
        ({"output": "x", "cacheReadTokens": -1}, '"cacheReadTokens"'),
        ({"output": "x", "ok": "yes"}, '"ok" must be a boolean'),
        ({"output": 3}, '"output" must be a string'),
        ({"ok": False, "error": "quota exhausted"}, "reported failure: quota exhausted"),
        ({"ok": False}, "reported failure"),
        ({"output": "  \n\u3000"}, "completed without model output"),
        ({"ok": True}, "completed without model output"),
        ({"output": "x", "mockStats": {"hits": 0, "misses": 0, "perMock": {"Read:1": 1}}}, "add up to 1"),
    ],
)
def test_answers_the_reference_refuses_are_execution_failures(answer: dict[str, Any], reason: str) -> None:
    with pytest.raises(ExecutionError, match=reason):
        parse_result(answer, source="the executor command")


def test_a_blank_string_answer_is_an_execution_failure() -> None:
    with pytest.raises(ExecutionError, match="without model output"):
        parse_result(" \t", source="python:f")
    with pytest.raises(ExecutionError, match="without model output"):
        parse_result(ExecutionResult(output=""), source="python:f")


def test_extra_token_and_turn_fields_are_read() -> None:
    result = parse_result(
        {
            "output": "x",
            "numTurns": 2.0,
            "cacheReadTokens": 5,
            "cacheCreationTokens": 7,
            "fullNumTurns": 4,
            "numSubAgents": 1,
            "toolCalls": [{**CALL, "status": "success"}],
        },
        source="cmd",
    )
    assert (result.numTurns, result.cacheReadTokens, result.cacheCreationTokens) == (2, 5, 7)
    assert (result.fullNumTurns, result.numSubAgents) == (4, 1)


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "exec.py"
    path.write_text(body, encoding="utf-8")
    return f"{sys.executable} {path}"


def _run(command: str, request: ExecutionRequest) -> ExecutionResult:
    return asyncio.run(CommandExecutor(command, timeout=30).execute(request))


def test_an_object_without_ok_or_output_is_plain_text(tmp_path: Path) -> None:
    command = _script(tmp_path, "print('{\"answer\": 1}')\n")
    assert _run(command, ExecutionRequest(prompt="p")).output == '{"answer": 1}'


def test_blank_stdout_is_an_execution_failure(tmp_path: Path) -> None:
    with pytest.raises(ExecutionError, match="without model output"):
        _run(_script(tmp_path, "print('   ')\n"), ExecutionRequest(prompt="p"))


HOOKED = """
import json, os, pathlib, sys
request = json.load(sys.stdin)
mocks_file = pathlib.Path(os.environ["OMK_MOCKS_FILE"])
spec = json.loads(mocks_file.read_text())
# What an omk hook does: count a hit of the first mock beside the mocks file.
(mocks_file.parent / "hits.json").write_text(json.dumps({"hits_total": 2, "misses_total": 1, "perMock": {"Read:1": 2}}))
print(json.dumps({"output": json.dumps({"tools": [m["tool"] for m in spec["mocks"]], "strict": spec["strict"], "baseDir": spec["baseDir"]})}))
"""


def test_mocks_reach_the_command_through_omk_mocks_file_and_hits_come_back(tmp_path: Path) -> None:
    request = ExecutionRequest(
        prompt="p", mocks=[{"tool": "Read", "return": "x"}], mocks_strict=True, mock_base_dir=tmp_path
    )
    result = _run(_script(tmp_path, HOOKED), request)
    seen = json.loads(result.output)
    assert seen == {"tools": ["Read"], "strict": True, "baseDir": str(tmp_path)}
    assert result.mockStats is not None
    assert (result.mockStats.hits, result.mockStats.misses, result.mockStats.perMock) == (2, 1, {"Read:1": 2})
    assert not list(Path(tmp_path).glob("omk-mocks-*"))


def test_without_mocks_no_channel_and_no_mock_stats(tmp_path: Path) -> None:
    command = _script(tmp_path, "import os\nprint('set' if 'OMK_MOCKS_FILE' in os.environ else 'unset')\n")
    result = _run(command, ExecutionRequest(prompt="p"))
    assert (result.output, result.mockStats) == ("unset", None)


def test_hook_file_hits_that_do_not_add_up_are_an_execution_failure(tmp_path: Path) -> None:
    # The reference validates the hook file's counts too: hits_total 2 against one per-mock hit.
    body = HOOKED.replace('"perMock": {"Read:1": 2}', '"perMock": {"Read:1": 1}')
    request = ExecutionRequest(prompt="p", mocks=[{"tool": "Read", "return": "x"}], mock_base_dir=tmp_path)
    with pytest.raises(ExecutionError, match='"perMock" counts add up to 1, "hits" is 2'):
        _run(_script(tmp_path, body), request)
