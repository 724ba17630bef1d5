"""Executors that run on this machine (CONTRACT §8): echo, Python callables, the hook, commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import (
    FakeCommand,
    OmkRun,
    executor_arg,
    load_report,
    parse_junit,
    report_samples,
    sample,
    write_sample_set,
)

ENV_HEADING = "Declared preconditions for this task (context only; nothing below was set up for you):"
ENV_CLOSING = (
    "Take these as given and go straight to the task: do not spend steps checking whether the "
    "tools or files exist (for example with `which`, `test -f` or `find`)."
)


# --- echo --------------------------------------------------------------------------------------


def test_echo_answers_with_the_assembled_prompt(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(
        pytester,
        sample("plain", "What is 2+2?", assertions=[{"type": "equals", "value": "What is 2+2?"}]),
        sample(
            "ctx",
            "Summarize.",
            context="line one\nline two",
            assertions=[{"type": "equals", "value": "Summarize.\n\n```\nline one\nline two\n```"}],
        ),
    )
    result = omk_run("--omk-executor=echo", "--omk-report=r.json")
    result.assert_outcomes(passed=2)
    record = report_samples(load_report(pytester.path / "r.json"))["ctx"]
    assert record["execution"]["output"] == "Summarize.\n\n```\nline one\nline two\n```"
    assert record["executor"] == "echo"


# --- python:pkg.mod:attr -------------------------------------------------------------------------

EXECUTORS_MODULE = """
import asyncio
import json

from pytest_omk.models.results import ExecutionResult

SEEN = {}


def sync_exec(request):
    return json.dumps(
        {
            "prompt": request.prompt,
            "system": request.system,
            "model": request.model,
            "sample_id": request.sample.sample_id,
            "cwd": str(request.cwd),
        }
    )


async def async_exec(request):
    await asyncio.sleep(0)
    return "async says " + request.prompt.upper()


def traced(request):
    return {
        "output": "saved it",
        "costUSD": 0.002,
        "numTurns": 3,
        "toolCalls": [
            {"tool": "Read", "input": {"file_path": "/srv/notes.md"}, "output": "RUNBOOK v2", "success": True},
            {"tool": "save_observation", "input": {"note": "30 days", "confirmedByUser": True}, "output": "ok", "success": True},
        ],
    }


def result_object(request):
    return ExecutionResult(output="from a result object", costUSD=0.25, inputTokens=7, outputTokens=3, numTurns=1)


def raises(request):
    raise RuntimeError("model backend unreachable")


def wrong_type(request):
    return 42


class Holder:
    @staticmethod
    def nested(request):
        return "nested attr"
"""


@pytest.fixture
def py_executors(pytester: pytest.Pytester) -> str:
    """A module of executors importable by the run; returns its name."""
    pytester.makepyfile(omk_it_executors=EXECUTORS_MODULE)
    pytester.syspathinsert()
    return "omk_it_executors"


def test_python_sync_callable_gets_the_request(
    pytester: pytest.Pytester, omk_run: OmkRun, py_executors: str
) -> None:
    pytester.path.joinpath("prompts").mkdir()
    pytester.path.joinpath("prompts/system.md").write_text("Be terse.", encoding="utf-8")
    write_sample_set(
        pytester,
        sample("s", "hi there", cwd="work", assertions=[{"type": "json_valid"}]),
        name="evals/eval-samples.json",
    )
    pytester.path.joinpath("evals/work").mkdir()
    result = omk_run(
        f"--omk-executor=python:{py_executors}:sync_exec",
        "--omk-model=tiny-1",
        "--omk-system=prompts/system.md",
        "--omk-report=r.json",
    )
    result.assert_outcomes(passed=1)
    record = report_samples(load_report(pytester.path / "r.json"))["s"]
    seen = json.loads(record["execution"]["output"])
    assert seen == {
        "prompt": "hi there",
        "system": "Be terse.",
        "model": "tiny-1",
        "sample_id": "s",
        "cwd": str((pytester.path / "evals" / "work").resolve()),
    }
    assert record["executor"] == f"python:{py_executors}:sync_exec"


def test_python_async_callable(pytester: pytest.Pytester, omk_run: OmkRun, py_executors: str) -> None:
    write_sample_set(
        pytester, sample("s", "quiet", assertions=[{"type": "equals", "value": "async says QUIET"}])
    )
    omk_run(f"--omk-executor=python:{py_executors}:async_exec").assert_outcomes(passed=1)


def test_python_dict_with_tool_calls_grades_agent_assertions(
    pytester: pytest.Pytester, omk_run: OmkRun, py_executors: str
) -> None:
    write_sample_set(
        pytester,
        sample(
            "agent",
            assertions=[
                {"type": "tools_called", "values": ["Read", "save_observation"]},
                {"type": "tool_input_contains", "value": 'save_observation:"confirmedByUser":true'},
                {"type": "tool_output_contains", "value": "Read:RUNBOOK"},
                {"type": "tools_not_called", "values": ["Bash"]},
                {"type": "tools_count_max", "value": 2},
                {"type": "turns_max", "value": 3},
                {"type": "cost_max", "value": 0.01},
                {"type": "tools_called", "values": ["Bash"]},
                {"type": "tool_input_contains", "value": "Read:/etc/passwd"},
            ],
        ),
    )
    result = omk_run(f"--omk-executor=python:{py_executors}:traced", "-v", "--omk-report=r.json")
    result.stdout.fnmatch_lines(
        [
            "*SUBPASSED[[]assertion 0: tools_called[]]*",
            "*SUBPASSED[[]assertion 1: tool_input_contains[]]*",
            "*SUBPASSED[[]assertion 2: tool_output_contains[]]*",
            "*SUBPASSED[[]assertion 3: tools_not_called[]]*",
            "*SUBPASSED[[]assertion 4: tools_count_max[]]*",
            "*SUBPASSED[[]assertion 5: turns_max[]]*",
            "*SUBPASSED[[]assertion 6: cost_max[]]*",
            "*SUBFAILED[[]assertion 7: tools_called[]]*",
            "*SUBFAILED[[]assertion 8: tool_input_contains[]]*",
        ]
    )
    record = report_samples(load_report(pytester.path / "r.json"))["agent"]
    assert [c["tool"] for c in record["execution"]["toolCalls"]] == ["Read", "save_observation"]
    assert record["execution"]["numTurns"] == 3
    # fact: tool_input_contains ×2 (1 pass), tool_output_contains (pass) → 1 + 4·2/3 = 3.67
    # behavior: 5 passing + tools_called Bash failing → 1 + 4·5/6 = 4.33; composite (3.67+4.33)/2 = 4.0
    assert record["scores"] == {
        "assertions": 4.11,
        "fact": 3.67,
        "behavior": 4.33,
        "judge": None,
        "composite": 4.0,
    }


def test_python_execution_result_object(
    pytester: pytest.Pytester, omk_run: OmkRun, py_executors: str
) -> None:
    write_sample_set(
        pytester,
        sample(
            "s",
            assertions=[
                {"type": "contains", "value": "result object"},
                {"type": "cost_max", "value": 0.1},
            ],
        ),
    )
    result = omk_run(f"--omk-executor=python:{py_executors}:result_object", "-v", "--junitxml=j.xml")
    result.stdout.fnmatch_lines(
        ["*SUBPASSED[[]assertion 0: contains[]]*", "*SUBFAILED[[]assertion 1: cost_max[]]*"]
    )
    props = parse_junit(pytester.path / "j.xml").cases["eval-samples.json::s"].props
    assert props["omk.cost_usd"] == "0.250000"
    assert props["omk.assertion.1.cost_max"] == "fail"


def test_python_nested_attribute(pytester: pytest.Pytester, omk_run: OmkRun, py_executors: str) -> None:
    write_sample_set(pytester, sample("s", assertions=[{"type": "equals", "value": "nested attr"}]))
    omk_run(f"--omk-executor=python:{py_executors}:Holder.nested").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("attr", "message"),
    [("raises", "RuntimeError: model backend unreachable"), ("wrong_type", "returned int")],
)
def test_python_callable_failure_is_an_error(
    pytester: pytest.Pytester, omk_run: OmkRun, py_executors: str, attr: str, message: str
) -> None:
    write_sample_set(pytester, sample("s"))
    result = omk_run(f"--omk-executor=python:{py_executors}:{attr}", "--omk-retries=0", "-vv")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"ERROR eval-samples.json::s - *{message}*"])


@pytest.mark.parametrize(
    "spec", ["python:omk_no_such_module_xyz:run", "python:omk_it_executors:missing", "python:no-colon"]
)
def test_python_spec_that_cannot_be_resolved_is_a_usage_error(
    pytester: pytest.Pytester, omk_run: OmkRun, py_executors: str, spec: str
) -> None:
    write_sample_set(pytester, sample("s"))
    result = omk_run(f"--omk-executor={spec}")
    assert result.ret in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERRUPTED), result.stdout.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "omk" in result.stdout.str() + result.stderr.str()


# --- the pytest_omk_make_executor hook ---------------------------------------------------------


def test_make_executor_hook(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.makeconftest(
        """
        def pytest_omk_make_executor(config):
            model = config.getoption("omk_model") or "none"
            return lambda request: f"hooked[{model}] {request.sample.sample_id}: {request.prompt}"
        """
    )
    write_sample_set(
        pytester, sample("s", "ping", assertions=[{"type": "equals", "value": "hooked[m] s: ping"}])
    )
    result = omk_run("--omk-model=m", "--junitxml=j.xml")  # no --omk-executor: the hook provides one
    result.assert_outcomes(passed=1)
    assert (
        parse_junit(pytester.path / "j.xml")
        .cases["eval-samples.json::s"]
        .props["omk.executor"]
        .startswith("python:")
    )


def test_make_executor_hook_returning_none_falls_back(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.makeconftest("def pytest_omk_make_executor(config):\n    return None\n")
    write_sample_set(pytester, sample("s", "ping", assertions=[{"type": "equals", "value": "ping"}]))
    omk_run("--omk-executor=echo").assert_outcomes(passed=1)
    omk_run("-rs").stdout.fnmatch_lines(["SKIPPED*no executor configured*"])


# --- the command executor ------------------------------------------------------------------------


def test_command_json_and_plain_text_answers(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_sample_set(
        pytester,
        sample(
            "json",
            assertions=[{"type": "contains", "value": "from json"}, {"type": "cost_max", "value": 0.1}],
        ),
        sample("text", assertions=[{"type": "equals", "value": "from plain text"}]),
        sample("scalar", assertions=[{"type": "equals", "value": "4"}]),
    )
    spec = fake_command.script(
        {
            "json": {
                "output": "answer from json",
                "inputTokens": 12,
                "outputTokens": 4,
                "costUSD": 0.03,
                "durationApiMs": 250,
                "numTurns": 1,
                "stopReason": "end_turn",
            },
            "text": "  from plain text\n",
            "scalar": {"text": "4"},
        }
    )
    result = omk_run(executor_arg(spec), "--omk-report=r.json")
    result.assert_outcomes(passed=3)
    records = report_samples(load_report(pytester.path / "r.json"))
    execution = records["json"]["execution"]
    assert (
        execution["output"],
        execution["inputTokens"],
        execution["outputTokens"],
        execution["costUSD"],
    ) == (
        "answer from json",
        12,
        4,
        0.03,
    )
    assert records["text"]["execution"]["costUSD"] is None and records["text"]["execution"]["numTurns"] == 1


def test_command_trace_drives_agent_assertions(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    pytester.makeini("[pytest]\nomk_executor_capabilities = mocks\n")
    write_sample_set(
        pytester,
        sample(
            "agent",
            mocks=[
                {"tool": "Read", "match": {"file_path_endswith": "notes.md"}, "return": "NOTES"},
                {"tool": "Read", "return": "OTHER"},
                {"tool": "Bash", "return_seq": ["one", "two"]},
            ],
            assertions=[
                {"type": "tools_called", "values": ["Read", "Bash"]},
                {"type": "turns_max", "value": 4},
                {"type": "turns_min", "value": 4},
                {"type": "mock_hit", "value": "Read:1"},
                {"type": "mock_hit", "value": "Bash:1", "threshold": 2},
                {"type": "mock_hit", "value": "Read:2"},
                {"type": "tools_count_min", "value": 3},
            ],
        ),
    )
    trace = {
        "output": "done",
        "numTurns": 4,
        "toolCalls": [
            {"tool": "Read", "input": {"file_path": "/x/notes.md"}, "output": "NOTES", "success": True},
            {"tool": "Bash", "input": {"command": "ls"}, "output": "one", "success": True},
            {"tool": "Bash", "input": {"command": "ls -l"}, "output": "two", "success": True},
        ],
        "turns": [{"role": "assistant", "content": "reading"}, {"role": "tool", "content": "NOTES"}],
        "mockStats": {"hits": 3, "misses": 0, "perMock": {"Read:1": 1, "Bash:1": 2}},
    }
    spec = fake_command.script({"agent": trace})
    result = omk_run(executor_arg(spec), "-v", "--junitxml=j.xml")
    result.stdout.fnmatch_lines(
        [
            "*SUBPASSED[[]assertion 0: tools_called[]]*",
            "*SUBPASSED[[]assertion 1: turns_max[]]*",
            "*SUBPASSED[[]assertion 2: turns_min[]]*",
            "*SUBPASSED[[]assertion 3: mock_hit[]]*",
            "*SUBPASSED[[]assertion 4: mock_hit[]]*",
            "*SUBFAILED[[]assertion 5: mock_hit[]]*",
            "*SUBPASSED[[]assertion 6: tools_count_min[]]*",
        ]
    )
    result.stdout.fnmatch_lines(["*Read:2*hit at least 1*"])
    props = parse_junit(pytester.path / "j.xml").cases["eval-samples.json::agent"].props
    assert props["omk.assertion.5.mock_hit"] == "fail"
    # behavior only: 6 of 7 → 1 + 4·6/7 = 4.43
    assert props["omk.score.behavior"] == "4.43" and props["omk.score.composite"] == "4.43"
    request = fake_command.request("agent")["request"]
    assert request["mocksStrict"] is True
    assert request["mocks"][2] == {"tool": "Bash", "return_seq": ["one", "two"]}


def test_command_failure_is_an_error_with_stderr(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_sample_set(pytester, sample("s"), sample("t"))
    spec = fake_command.script(
        {"s": {"exit": 17, "stderr": "fatal: API quota exceeded for org"}, "t": {"exit": 9}}
    )
    result = omk_run(executor_arg(spec), "--omk-retries=0", "-vv", "--junitxml=j.xml")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "ERROR eval-samples.json::s - *fatal: API quota exceeded for org*",
            "ERROR eval-samples.json::t - *exited with code 9*",
        ]
    )
    junit = parse_junit(pytester.path / "j.xml")
    assert "quota exceeded" in junit.cases["eval-samples.json::s"].errors[0]


def test_command_request_shape_prompt_assembly_and_cwd(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    pytester.path.joinpath("suite/workspace").mkdir(parents=True)
    pytester.path.joinpath("system.txt").write_text("SYSTEM TEXT", encoding="utf-8")
    write_sample_set(
        pytester,
        sample(
            "full",
            "Fix the bug.",
            context="def f():\n    return 1",
            cwd="./workspace",
            allowedTools=["Read", "Bash"],
            environment={
                "cli_available": ["rg", "jq"],
                "files_available": ["src/app.py"],
                "notes": "  Python 3.12 only.  ",
            },
            mocks=[{"tool": "Read", "return": {"text": "stub"}}],
            mocksStrict=False,
        ),
        sample("bare", "Just this."),
        name="suite/eval-samples.yaml",
    )
    pytester.makeini("[pytest]\nomk_executor_capabilities = mocks\n")
    spec = fake_command.script({"*": "ok"})
    omk_run(executor_arg(spec), "--omk-model=model-x", "--omk-system=system.txt").assert_outcomes(passed=2)

    full = fake_command.request("full")
    request = full["request"]
    assert set(request) == {
        "model",
        "system",
        "prompt",
        "sample_id",
        "cwd",
        "mocks",
        "mocksStrict",
        "allowedTools",
    }
    expected_prompt = (
        "\n".join(
            [
                ENV_HEADING,
                "Command-line tools declared available (PATH was not changed):",
                "- rg",
                "- jq",
                "Files the task refers to (not created in the working directory):",
                "- src/app.py",
                "Notes: Python 3.12 only.",
                ENV_CLOSING,
            ]
        )
        + "\n\n---\n\nFix the bug.\n\n```\ndef f():\n    return 1\n```"
    )
    workspace = str((pytester.path / "suite" / "workspace").resolve())
    assert request == {
        "model": "model-x",
        "system": "SYSTEM TEXT",
        "prompt": expected_prompt,
        "sample_id": "full",
        "cwd": workspace,
        "mocks": [{"tool": "Read", "return": {"text": "stub"}}],
        "mocksStrict": False,
        "allowedTools": ["Read", "Bash"],
    }
    assert Path(full["process_cwd"]).resolve() == Path(workspace)

    bare = fake_command.request("bare")
    assert bare["request"]["prompt"] == "Just this."
    assert bare["request"]["cwd"] == str((pytester.path / "suite").resolve())
    assert Path(bare["process_cwd"]).resolve() == (pytester.path / "suite").resolve()
    assert bare["request"]["mocks"] is None and bare["request"]["allowedTools"] is None


def test_command_prefix_and_a_script_file_in_the_sample_cwd(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_sample_set(pytester, sample("s", assertions=[{"type": "equals", "value": "local"}]))
    pytester.path.joinpath("omk-command.json").write_text(json.dumps({"s": "local"}), encoding="utf-8")
    spec = fake_command.spec.replace(f" --script {fake_command.script_path}", "")
    assert "--script" not in spec
    omk_run(f"--omk-executor=command:{spec}").assert_outcomes(passed=1)
