"""``--omk-executor agent`` end to end: pytester runs against the loopback fake model, scripted to
call tools, with real tools in a temporary copy, mocks, allowedTools, turn and tool limits, MCP
tools, replay of a recorded run, and the upstream agent sample files graded as the reference would.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.agent import AgentExecutor, AgentOptions, is_allowed
from pytest_omk.errors import ConfigError, ExecutionError
from pytest_omk.execute.base import TransientError
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.run.executors import make_executor
from tests.fakes.fake_llm import FakeLLM
from tests.support.runner import run_pytest

SCHEMA = "omk.eval-sample-set/v2"
MCP_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_tool_server.py"
TOKEN = "obs-token-5f2b9c17e0d4"


@pytest.fixture(autouse=True, scope="module")
def _transport_modules_loaded() -> None:
    """Load httpx's transport stack and the MCP client in this process, before any pytester run.

    pytester's in-process runs drop every module first imported inside them. httpx loads httpcore,
    h11 and anyio lazily, at its first client; were that inside a run, later tests in this process
    would import second copies, and httpx's exception mapping (keyed by the first copies' classes)
    would stop recognizing connection errors.
    """
    for name in ("anyio", "h11", "httpcore._async.http11", "httpcore._backends.anyio", "mcp.client.stdio"):
        importlib.import_module(name)


# --- helpers ------------------------------------------------------------------------------------


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A scripted reply calling one tool."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def samples_file(directory: Path, *samples: Mapping[str, Any], name: str = "eval-samples.json") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(
        json.dumps({"schemaVersion": SCHEMA, "samples": list(samples)}, ensure_ascii=False), "utf-8"
    )
    return path


def tree_digest(root: Path) -> str:
    """A hash of every file's relative path, mode and bytes (and of every symlink's target)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(path.relative_to(root).as_posix().encode())
        if path.is_symlink():
            digest.update(str(path.readlink()).encode())
        elif path.is_file():
            digest.update(oct(path.stat().st_mode).encode() + path.read_bytes())
    return digest.hexdigest()


Run = Callable[..., tuple[pytest.RunResult, dict[str, dict[str, Any]]]]


@pytest.fixture
def agent(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    """The fake model, with the provider variables pointing at it."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-agent-key-0001")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-agent-key-0001")
    fake_llm.script(default="I have nothing to add.")
    return fake_llm


@pytest.fixture
def run(pytester: pytest.Pytester) -> Run:
    """``run(*args)``: the agent executor in process, judge off; returns the result and the JSON
    report's samples by id."""

    def go(*args: str, record: str = "off") -> tuple[pytest.RunResult, dict[str, dict[str, Any]]]:
        report = pytester.path / "omk-report.json"
        report.unlink(missing_ok=True)
        argv = [
            "--omk-executor=agent",
            "--omk-judge=none",
            f"--omk-record-mode={record}",
            f"--omk-report={report}",
        ]
        result = run_pytest(pytester, *argv, "-p", "no:xdist", *args)
        document = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {"samples": []}
        return result, {s["sample_id"]: s for s in document["samples"]}

    return go


def statuses(record: Mapping[str, Any]) -> list[str]:
    return [a["status"] for a in record["assertions"]]


def tool_names(record: Mapping[str, Any]) -> list[str]:
    return [c["tool"] for c in record["execution"]["toolCalls"]]


# --- real tools in a temporary copy -------------------------------------------------------------


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_real_tools_run_confined_to_a_temporary_copy(
    pytester: pytest.Pytester, agent: FakeLLM, run: Run, api: str
) -> None:
    workspace = pytester.path / "ws"
    (workspace / "docs").mkdir(parents=True)
    (workspace / "notes.txt").write_text("remember the milk\nbuy bread\n", encoding="utf-8")
    (workspace / "docs" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    (workspace / "link.md").symlink_to(workspace / "docs" / "guide.md")
    before = tree_digest(workspace)
    agent.add_rule(
        prompt="tidy the notes",
        replies=[
            call("Bash", command="ls && wc -l notes.txt"),
            call("Read", file_path="notes.txt"),
            call("Edit", file_path="notes.txt", old_string="milk", new_string="oat milk"),
            call("Write", file_path="link.md", content="overwritten through a link"),
            call("Read", file_path="../eval-samples.json"),
            call("Bash", command="cat notes.txt; rm -rf docs; ls"),
            "Done: the notes now say oat milk.",
        ],
    )
    samples_file(
        pytester.path,
        {
            "sample_id": "tidy",
            "prompt": "Please tidy the notes.",
            "cwd": "./ws",
            "assertions": [
                {"type": "tools_called", "values": ["Bash", "Read", "Edit"]},
                {"type": "tool_input_contains", "value": "Bash:wc -l"},
                {"type": "tool_output_contains", "value": "Read:remember the milk"},
                {"type": "tool_output_contains", "value": "Bash:remember the oat milk"},
                {"type": "tool_output_contains", "value": "Read:outside the working directory"},
                {"type": "turns_max", "value": 7},
                {"type": "turns_max", "value": 6},
                {"type": "contains", "value": "oat milk"},
            ],
        },
    )
    _, records = run(f"--omk-agent-api={api}")
    record = records["tidy"]
    assert statuses(record) == ["pass"] * 6 + ["fail", "pass"], record["assertions"]
    assert record["execution"]["numTurns"] == 7
    calls = record["execution"]["toolCalls"]
    assert [c["tool"] for c in calls] == ["Bash", "Read", "Edit", "Write", "Read", "Bash"]
    assert calls[0]["output"] == "docs\nlink.md\nnotes.txt\n2 notes.txt\n"
    assert [c["success"] for c in calls] == [True, True, True, True, False, True]
    assert calls[5]["output"] == "remember the oat milk\nbuy bread\nlink.md\nnotes.txt\n"
    # The user's directory is byte-for-byte what it was, link target included.
    assert tree_digest(workspace) == before
    # The model saw the tools and got the results in its API's shape.
    last = agent.requests[-1]
    assert last.path == ("/v1/chat/completions" if api == "openai" else "/v1/messages")
    offered = last.body["tools"]
    names = [t["function"]["name"] if api == "openai" else t["name"] for t in offered]
    assert names == ["Bash", "Read", "Write", "Edit", "Glob", "Grep"]
    assert "oat milk" in last.tool_result
    assert record["outcome"] == "failed"  # the deliberately failing turns_max 6


# --- mocks --------------------------------------------------------------------------------------


def test_mocks_hit_miss_strict_pass_through_and_return_seq(
    pytester: pytest.Pytester, agent: FakeLLM, run: Run
) -> None:
    (pytester.path / "fixtures").mkdir()
    (pytester.path / "fixtures" / "page.html").write_text("<h1>Release notes</h1>", encoding="utf-8")
    agent.add_rule(
        prompt="check the deploy",
        replies=[
            call("Bash", command="curl -s https://ci.dev/status"),
            call("Bash", command="curl -s https://ci.dev/status"),
            call("Bash", command="curl -s https://ci.dev/status"),
            call("Read", file_path="/etc/app/config.json"),
            call("WebFetch", url="https://docs.dev/releases/42", prompt="summarize"),
            call("bash", command="rm -rf /"),
            "Deploy is done.",
        ],
    )
    agent.add_rule(
        prompt="push the branch",
        replies=[
            call("Bash", command="git push origin main"),
            call("Bash", command="echo really-ran > proof.txt && cat proof.txt"),
            "Pushed.",
        ],
    )
    samples_file(
        pytester.path,
        {
            "sample_id": "strict",
            "prompt": "Please check the deploy.",
            "mocks": [
                {
                    "tool": "Bash",
                    "match": {"command_glob": "curl * https://ci.dev/*"},
                    "return_seq": ["pending", "done"],
                },
                {"tool": "Read", "match": {"file_path_endswith": "config.json"}, "return": {"env": "prod"}},
                {
                    "tool": "WebFetch",
                    "match": {"url_glob": "https://docs.dev/*"},
                    "return_file": "fixtures/page.html",
                },
            ],
            "assertions": [
                {"type": "mock_hit", "value": "Bash:1", "threshold": 3},
                {"type": "mock_hit", "value": "Read:1"},
                {"type": "mock_hit", "value": "WebFetch:1"},
                {"type": "tool_output_contains", "value": 'Read:{"env":"prod"}'},
                {"type": "tool_output_contains", "value": "WebFetch:Release notes"},
                {
                    "type": "tool_output_contains",
                    "value": "Bash:[omk-mock-strict] unmocked Bash call blocked",
                },
            ],
        },
        {
            "sample_id": "pass-through",
            "prompt": "Please push the branch.",
            "mocksStrict": False,
            "mocks": [
                {"tool": "Bash", "match": {"command_glob": "git push*"}, "return": "pushed (mock)"},
                {"tool": "Read", "return": "never used"},
            ],
            "assertions": [
                {"type": "mock_hit", "value": "Bash:1"},
                {"type": "tool_output_contains", "value": "Bash:really-ran"},
                {"type": "mock_hit", "value": "Read:1"},
            ],
        },
    )
    _, records = run()
    strict = records["strict"]
    assert statuses(strict) == ["pass"] * 6, strict["assertions"]
    outputs = [c["output"] for c in strict["execution"]["toolCalls"]]
    # return_seq in order, then its last element repeats.
    assert outputs[:3] == ["pending", "done", "done"]
    assert outputs[5] == "[omk-mock-strict] unmocked Bash call blocked"
    assert tool_names(strict) == ["Bash", "Bash", "Bash", "Read", "WebFetch", "Bash"]
    # A mocked tool the agent lacks (WebFetch) is offered so the mock can answer it.
    first = next(r for r in agent.requests if "check the deploy" in r.prompt)
    assert "WebFetch" in [t["function"]["name"] for t in first.body["tools"]]
    through = records["pass-through"]
    assert statuses(through) == ["pass", "pass", "fail"], through["assertions"]
    assert [c["output"] for c in through["execution"]["toolCalls"]] == ["pushed (mock)", "really-ran\n"]
    assert (strict["outcome"], through["outcome"]) == ("passed", "failed")


# --- allowedTools, max turns, tool timeout -------------------------------------------------------


def test_allowed_tools_limit_what_is_offered_and_refuse_the_rest(
    pytester: pytest.Pytester, agent: FakeLLM, run: Run
) -> None:
    (pytester.path / "ws").mkdir()
    (pytester.path / "ws" / "a.txt").write_text("alpha\n", encoding="utf-8")
    agent.add_rule(
        prompt="read only",
        replies=[call("Bash", command="touch x"), call("read", file_path="a.txt"), "alpha it is"],
    )
    samples_file(
        pytester.path,
        {
            "sample_id": "limited",
            "prompt": "You may read only.",
            "cwd": "ws",
            "allowedTools": ["Read"],
            "assertions": [
                {"type": "tools_called", "values": ["Bash", "Read"]},
                {"type": "tool_output_contains", "value": "Bash:is not allowed for this sample"},
                {"type": "tool_output_contains", "value": "Read:alpha"},
            ],
        },
    )
    _, records = run()
    record = records["limited"]
    assert statuses(record) == ["pass", "pass", "pass"]
    assert [c["success"] for c in record["execution"]["toolCalls"]] == [False, True]
    assert [t["function"]["name"] for t in agent.requests[0].body["tools"]] == ["Read"]
    assert record["outcome"] == "passed"


def test_max_turns_stops_the_loop(pytester: pytest.Pytester, agent: FakeLLM, run: Run) -> None:
    step = {"text": "still looking", "tool_calls": [{"name": "Glob", "arguments": {"pattern": "**/*"}}]}
    agent.add_rule(prompt="loop forever", replies=[step])
    samples_file(
        pytester.path,
        {
            "sample_id": "looping",
            "prompt": "Please loop forever.",
            "assertions": [{"type": "turns_max", "value": 3}, {"type": "turns_max", "value": 2}],
        },
    )
    _, records = run("--omk-agent-max-turns=3")
    record = records["looping"]
    assert record["execution"]["numTurns"] == 3
    assert record["execution"]["output"] == "still looking"
    calls = record["execution"]["toolCalls"]
    assert [c.get("status") for c in calls] == ["success", "success", "cancelled"]
    assert statuses(record) == ["pass", "fail"]
    assert len(agent.requests) == 3
    assert record["outcome"] == "failed"


def test_a_tool_timeout_fails_the_call_not_the_run(
    pytester: pytest.Pytester, agent: FakeLLM, run: Run
) -> None:
    agent.add_rule(prompt="be patient", replies=[call("Bash", command="sleep 30"), "gave up waiting"])
    samples_file(
        pytester.path,
        {
            "sample_id": "slow",
            "prompt": "Please be patient.",
            "assertions": [{"type": "tool_output_contains", "value": "Bash:timed out after 0.3 s"}],
        },
    )
    _, records = run("--omk-agent-tool-timeout=0.3")
    record = records["slow"]
    assert statuses(record) == ["pass"]
    assert record["execution"]["toolCalls"][0]["success"] is False
    assert record["execution"]["output"] == "gave up waiting"
    assert record["outcome"] == "passed"


# --- replay -------------------------------------------------------------------------------------


def test_a_recorded_agent_run_replays_its_trace_without_running_tools(
    pytester: pytest.Pytester, agent: FakeLLM, run: Run, tmp_path: Path
) -> None:
    # Bash is sandboxed (it cannot write outside its working copy), so what shows it ran is its
    # output; on replay the model server is stopped and the tool output comes from the recording.
    agent.add_rule(
        prompt="count files",
        replies=[
            call("Bash", command="echo ran >&2; ls | wc -l"),
            call("Glob", pattern="*"),
            "3 files",
        ],
    )
    (pytester.path / "ws").mkdir()
    for name in ("a", "b", "c"):
        (pytester.path / "ws" / name).write_text(name, encoding="utf-8")
    samples_file(
        pytester.path,
        {
            "sample_id": "count",
            "prompt": "Please count files.",
            "cwd": "ws",
            "mocks": [{"tool": "Glob", "return": "a\nb\nc"}],
            "mocksStrict": False,
            "assertions": [
                {"type": "tools_called", "values": ["Bash", "Glob"]},
                {"type": "tool_output_contains", "value": "Bash:3"},
                {"type": "mock_hit", "value": "Glob:1"},
                {"type": "turns_min", "value": 3},
                {"type": "contains", "value": "3 files"},
            ],
        },
    )
    _, live = run("--omk-recordings=recs", record="new_episodes")
    assert live["count"]["outcome"] == "passed"
    assert live["count"]["execution"]["toolCalls"][0]["output"] == "ran\n3\n"
    agent.stop()
    _, replayed = run("--omk-recordings=recs", record="none")
    assert replayed["count"]["outcome"] == "passed"
    assert replayed["count"]["execution"]["replayed"] is True
    assert replayed["count"]["scores"] == live["count"]["scores"]
    assert replayed["count"]["assertions"] == live["count"]["assertions"]
    for key in ("toolCalls", "numTurns", "output", "inputTokens", "outputTokens"):
        assert replayed["count"]["execution"][key] == live["count"]["execution"][key]
    # One recording holds the whole run, trace and mock statistics included.
    (recording,) = (pytester.path / "recs").rglob("*.json")
    stored = json.loads(recording.read_text(encoding="utf-8"))
    assert stored["result"]["stopReason"] in ("stop", "end_turn")
    assert stored["result"]["mockStats"] == {"hits": 1, "misses": 1, "perMock": {"Glob:1": 1}}
    assert [t["role"] for t in stored["result"]["turns"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]


# --- MCP tools ----------------------------------------------------------------------------------


def write_mcp_config(pytester: pytest.Pytester, log: Path) -> None:
    server = {
        "command": sys.executable,
        "args": [str(MCP_SERVER)],
        "env": {"OBS_API_TOKEN": TOKEN, "OBS_LOG": str(log)},
    }
    (pytester.path / ".mcp.json").write_text(json.dumps({"mcpServers": {"omk": server}}), encoding="utf-8")


def test_mcp_tools_are_offered_called_and_traced_by_canonical_name(
    pytester: pytest.Pytester, agent: FakeLLM, run: Run, tmp_path: Path
) -> None:
    log = tmp_path / "obs.jsonl"
    write_mcp_config(pytester, log)
    agent.add_rule(
        prompt="who owns billing",
        replies=[
            call("mcp__omk__lookup_owner", service="billing-webhook"),
            call("mcp__omk__whoami"),
            call("mcp__omk__save_observation", summary="owner lookup", confirmedByUser=True),
            call("mcp__omk__fail"),
            "Payments Platform owns it.",
        ],
    )
    samples_file(
        pytester.path,
        {
            "sample_id": "mcp",
            "prompt": "Please find who owns billing.",
            "mocks": [{"tool": "omk.save_observation", "return": "saved (mock)"}],
            "mocksStrict": False,
            "assertions": [
                {"type": "tools_called", "values": ["omk.lookup_owner", "omk.save_observation"]},
                {"type": "tool_output_contains", "value": "omk.lookup_owner:Payments Platform"},
                {"type": "tool_input_contains", "value": 'omk.save_observation:"confirmedByUser":true'},
                {"type": "mock_hit", "value": "omk.save_observation:1"},
                {"type": "tool_output_contains", "value": "omk.fail:error executing tool fail"},
            ],
        },
    )
    result, records = run("--omk-recordings=recs", record="new_episodes")
    record = records["mcp"]
    assert statuses(record) == ["pass"] * 5, record["assertions"]
    calls = record["execution"]["toolCalls"]
    assert [c["tool"] for c in calls] == [
        "omk.lookup_owner",
        "omk.whoami",
        "omk.save_observation",
        "omk.fail",
    ]
    assert calls[1]["output"] == "token=***"  # the server's env token never leaves it
    assert [c["success"] for c in calls] == [True, True, True, False]
    assert not log.exists()  # save_observation was mocked, so the server never saw it
    offered = [t["function"]["name"] for t in agent.requests[0].body["tools"]]
    assert offered[6:] == [
        "mcp__omk__save_observation",
        "mcp__omk__lookup_owner",
        "mcp__omk__whoami",
        "mcp__omk__fail",
        "mcp__omk__slow",
    ]
    everything = [
        p.read_text(encoding="utf-8") for p in pytester.path.rglob("*.json") if p.name != ".mcp.json"
    ]
    everything += [result.stdout.str(), "".join(json.dumps(r.body) for r in agent.requests)]
    assert not any(TOKEN in text for text in everything)
    assert record["outcome"] == "passed"


# --- the upstream agent samples -----------------------------------------------------------------


def test_upstream_agent_runtime_samples(
    pytester: pytest.Pytester, agent: FakeLLM, run: Run, upstream_samples: Path
) -> None:
    target = pytester.path / "agent-runtime"
    target.mkdir()
    shutil.copy(upstream_samples / "examples" / "agent-runtime" / "eval-samples.json", target)
    workspace = target / "workspace"
    (workspace / "services").mkdir(parents=True)
    (workspace / "OWNERS.md").write_text("billing-webhook: Payments Platform\nsearch: Discovery\n", "utf-8")
    (workspace / "services" / "billing-webhook.md").write_text(
        "# billing-webhook\nDeploy check: verify the webhook signature, then check the retry queue is empty.\n",
        "utf-8",
    )
    before = tree_digest(workspace)
    agent.add_rule(
        prompt="Which team owns the billing webhook",
        replies=[
            call("Grep", pattern="billing-webhook", files_only=True),
            call("Read", file_path="OWNERS.md"),
            "billing-webhook is owned by Payments Platform, per OWNERS.md.",
        ],
    )
    agent.add_rule(
        prompt="Summarize the deploy check",
        replies=[
            call("Read", file_path="services/billing-webhook.md"),
            "Verify the signature; check the retry queue.",
        ],
    )
    _, records = run()
    for sample_id in ("find-owner", "summarize-runbook"):
        assert statuses(records[sample_id]) == ["pass"], records[sample_id]["assertions"]
        # One passing assertion of weight 1: 1 + 4 * 1/1 = 5.
        assert records[sample_id]["scores"]["assertions"] == 5.0
    assert tool_names(records["find-owner"]) == ["Grep", "Read"]
    assert (
        records["find-owner"]["execution"]["toolCalls"][0]["output"]
        == "OWNERS.md\nservices/billing-webhook.md"
    )
    assert tree_digest(workspace) == before
    assert {records[i]["outcome"] for i in ("find-owner", "summarize-runbook")} == {"passed"}


# The control experiments have no cwd: the agent starts in an empty directory (the owner's
# baseline), so the runtime file is missing and every Read/Bash of it fails.
_BASH_WC = call("Bash", command="pwd && wc -l skills/runtime-context-check.md")
_READ = call("Read", file_path="skills/runtime-context-check.md")
CONTROL_SCRIPTS: dict[str, tuple[str, list[Any]]] = {
    "artifact-001": ("返回第一行里的随机 runtime token 和文件总行数", [_BASH_WC, _READ, "NO_FILE_IN_CWD"]),
    "artifact-002": ("RUNTIME:<第一行>|LINES:<行数>", [_BASH_WC, _READ, "RUNTIME:NO_FILE|LINES:0"]),
    "assertion-001": ("如果文件存在，输出", [_READ, "NO_FILE_IN_CWD"]),
    "assertion-002": (
        "并只输出一行结果",
        [_READ, call("Bash", command="wc -l skills/runtime-context-check.md"), "NO_FILE_IN_CWD"],
    ),
    "env-001": ("第一行，并原样输出第一行里的 runtime token", [_READ, "NO_FILE_IN_CWD"]),
    "env-002": ("最终只输出 `RUNTIME:<第一行>`", [_READ, "NO_FILE_IN_CWD"]),
}
# Hand-checked against the owner's rules: failed calls still count for tools_called and
# tool_input_contains, tool_output_contains reads the (error) output, turns_* read numTurns.
CONTROL_EXPECTED: dict[str, tuple[list[str], float]] = {
    # weights 1,1,1,1,.5,.5: passed 1+1 of 5 -> 1 + 4 * 2/5 = 2.6
    "artifact-001": (["pass", "fail", "pass", "fail", "fail", "fail"], 2.6),
    # weights 1,1,1,1,.5,.5: passed 1+1+.5 of 5 -> 3.0
    "artifact-002": (["pass", "fail", "pass", "fail", "pass", "fail"], 3.0),
    # weights 1,1,.5,.5: passed 1+.5+.5 of 3 -> 3.67
    "assertion-001": (["pass", "fail", "pass", "pass"], 3.67),
    # weights 1,1,1,.5: passed 1+1+.5 of 3.5 -> 3.86
    "assertion-002": (["pass", "fail", "pass", "pass"], 3.86),
    # weights 1,1,.5: passed .5 of 2.5 -> 1.8
    "env-001": (["fail", "fail", "pass"], 1.8),
    # weights 1,.5,.5,.5: passed 1 of 2.5 -> 2.6
    "env-002": (["fail", "fail", "pass", "pass"], 2.6),
}


def test_upstream_control_experiments(
    pytester: pytest.Pytester, agent: FakeLLM, run: Run, upstream_samples: Path
) -> None:
    source = upstream_samples / "test" / "fixtures" / "agent-eval" / "control-experiments"
    files = sorted(source.glob("*.eval-samples.json"))
    assert len(files) == 3
    prompts = [s["prompt"] for f in files for s in json.loads(f.read_text(encoding="utf-8"))["samples"]]
    for sample_id, (needle, replies) in CONTROL_SCRIPTS.items():
        assert sum(needle in p for p in prompts) == 1, sample_id
        agent.add_rule(prompt=needle, replies=replies)
    args = []
    for path in files:
        shutil.copy(path, pytester.path)
        args.append(f"--omk-samples={path.name}")
    _, records = run(*args)
    for sample_id, (expected, score) in CONTROL_EXPECTED.items():
        record = records[sample_id]
        assert statuses(record) == expected, (sample_id, record["assertions"])
        assert record["scores"]["assertions"] == score, sample_id
    assert records["artifact-001"]["execution"]["numTurns"] == 3
    assert tool_names(records["assertion-002"]) == ["Read", "Bash"]
    assert {r["outcome"] for r in records.values()} == {"failed"}


def test_upstream_mcp_observation_samples(
    pytester: pytest.Pytester, agent: FakeLLM, run: Run, upstream_samples: Path, tmp_path: Path
) -> None:
    log = tmp_path / "obs.jsonl"
    write_mcp_config(pytester, log)
    shutil.copy(
        upstream_samples / "test" / "fixtures" / "mcp-observation" / "eval-samples.json", pytester.path
    )
    save = call("mcp__omk__save_observation", summary="refund window is 30 days, not 7", confirmedByUser=True)
    for needle in ("请把这个问题记录到 OMK", "我已明确纠正为 30 天。现在我输入", "现在我的回答是：确认记录"):
        agent.add_rule(prompt=needle, system="You are working in the directory", replies=[save, "已记录。"])
    agent.add_rule(prompt="我们只讨论了 OMK 的一般功能", replies=["你想记录哪一条反馈？"])
    _, records = run()
    saved = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(saved) == 3 and all(s["confirmedByUser"] is True for s in saved)
    # The trace names the MCP tool canonically (omk.save_observation), as the owner's tool-identity
    # normalization does; the files' bare "save_observation" therefore matches no call, exactly
    # as in the reference: tools_called and tool_input_contains fail, tools_not_called passes.
    for sample_id in ("direct-explicit-capture", "skill-feedback-shortcut", "indirect-correction-confirmed"):
        record = records[sample_id]
        assert tool_names(record) == ["omk.save_observation"]
        assert statuses(record) == ["fail", "fail", "pass"], record["assertions"]
        assert record["scores"]["assertions"] == 2.33  # 1 + 4 * 1/3
    for sample_id in (
        "skill-feedback-shortcut-no-candidate",
        "indirect-correction-await-confirmation",
        "negative-hypothetical-example",
        "negative-unreviewed-draft",
    ):
        assert records[sample_id]["execution"]["toolCalls"] == []
        assert records[sample_id]["scores"]["assertions"] == 5.0
    # Three tripwire samples are xfail(strict=False): passing, they XPASS.
    outcomes = sorted(r["outcome"] for r in records.values())
    assert outcomes == ["failed"] * 3 + ["passed"] + ["xpassed"] * 3


# --- the executor called directly ---------------------------------------------------------------


def execute(llm: FakeLLM, request: ExecutionRequest, **options: Any) -> ExecutionResult:
    env = {"OPENAI_BASE_URL": llm.openai_base_url, "OPENAI_API_KEY": "sk-fake-agent-key-0001"}

    async def go() -> ExecutionResult:
        executor = AgentExecutor(AgentOptions(**options), env=env)
        try:
            return await executor.execute(request)
        finally:
            await executor.aclose()

    return asyncio.run(go())


def test_allowed_tools_entries() -> None:
    assert is_allowed("Bash", None)
    assert is_allowed("Bash", ["bash"])
    assert is_allowed("mcp__omk__whoami", ["mcp__omk"])
    assert is_allowed("mcp__omk__whoami", ["omk.whoami"])
    assert not is_allowed("mcp__omkx__whoami", ["mcp__omk"])
    assert not is_allowed("Read", [])


def test_permission_patterns_in_allowed_tools_fail_closed(fake_llm: FakeLLM) -> None:
    with pytest.raises(ExecutionError, match=r"Bash\(git:\*\)"):
        execute(fake_llm, ExecutionRequest(prompt="p", allowed_tools=["Bash(git:*)"]))
    assert fake_llm.requests == []


def test_a_tool_only_mocked_is_offered_under_a_safe_name(fake_llm: FakeLLM) -> None:
    fake_llm.add_rule(prompt="fetch", replies=[call("web_fetch", url="https://a.dev"), "ok"])
    mocks = [{"tool": "web.fetch", "return": "page text"}]
    result = execute(fake_llm, ExecutionRequest(prompt="fetch it", mocks=mocks))
    assert [t["function"]["name"] for t in fake_llm.requests[0].body["tools"]][-1] == "web_fetch"
    assert result.toolCalls is not None
    assert [(c.tool, c.output) for c in result.toolCalls] == [("web.fetch", "page text")]
    assert result.mockStats is not None and result.mockStats.perMock == {"web.fetch:1": 1}


def test_a_transient_provider_failure_mid_run_raises_transient_error(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    step = call("Bash", command="echo one")
    fake_llm.add_rule(
        prompt="two steps", replies=[step, {"fault": "unavailable", "retry_after": 0}, step, "done"]
    )
    with pytest.raises(TransientError, match="503"):
        execute(fake_llm, ExecutionRequest(prompt="two steps"))
    assert list(tmp_path.glob("omk-agent-*")) == []  # the working copy is gone
    # The retry the pipeline makes starts a fresh run, which now succeeds.
    result = execute(fake_llm, ExecutionRequest(prompt="two steps"))
    assert result.output == "done" and result.numTurns == 2


def test_factory_specs_pick_the_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-agent-key-0001")
    assert make_executor("agent", timeout=5).id == "agent:openai"
    assert make_executor("agent", timeout=5, agent=AgentOptions(api="anthropic")).id == "agent:anthropic"
    chosen = make_executor("agent:anthropic", timeout=5, agent=AgentOptions(max_turns=3))
    assert chosen.id == "agent:anthropic" and chosen.supports_mocks
    with pytest.raises(ConfigError, match="max-turns"):
        AgentOptions(max_turns=0)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--omk-agent-max-turns=0", "--omk-agent-max-turns must be an integer >= 1, not '0'"),
        ("--omk-agent-tool-timeout=0", "--omk-agent-tool-timeout must be a number > 0, not '0'"),
        ("--omk-mcp-config=missing.json", "missing.json does not exist"),
    ],
)
def test_bad_agent_options_are_usage_errors(
    pytester: pytest.Pytester, agent: FakeLLM, option: str, message: str
) -> None:
    samples_file(pytester.path, {"sample_id": "s", "prompt": "p"})
    result = run_pytest(pytester, "--omk-executor=agent", "--omk-record-mode=off", option)
    # Options are checked at start-up; the MCP config when the executor is built (at collection).
    assert result.ret in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERRUPTED)
    assert message in result.stderr.str() + result.stdout.str()
