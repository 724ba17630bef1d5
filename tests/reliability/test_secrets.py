"""Configured secrets are never written anywhere.

A full run (model under test over the OpenAI API, judge over the Anthropic API, a URL resolved
through the MCP docs server, a provider error that echoes the key, JUnit, JSON report, recordings,
``-v -rA`` terminal output) with sentinel values for every kind of credential: the API keys, the
authorization headers built from them, a password in the base URL and an MCP server's env token.
None of them may appear in any file the run wrote (every byte under the run's directory, the
pytest cache with its recordings included) nor in its stdout or stderr.

The second test is the limit of the guarantee: a configured secret that the user writes into a
prompt, and that the model echoes, is scrubbed from recordings (the key still replays), while the
report shows the model's output as it was (it is the user's own content, see docs/reliability.md).
"""

from __future__ import annotations

import base64
import json
import secrets
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.reliability.helpers import audit_recordings
from tests.support import load_report, parse_junit, report_samples, run_pytest, write_samples

MCP_DOCS_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_docs_server.py"
JUDGE_SYSTEM = "impartial judge"


def sentinel(prefix: str) -> str:
    return f"{prefix}-sentinel-{secrets.token_hex(8)}"


def files_under(root: Path) -> dict[Path, bytes]:
    """Every regular file below ``root`` (hidden ones too), as bytes."""
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def mcp_config(token: str) -> dict[str, Any]:
    return {
        "mcpServers": {
            "docs": {
                "command": sys.executable,
                "args": [str(MCP_DOCS_SERVER)],
                "env": {"DOCS_API_TOKEN": token},
                "urlPatterns": ["docs.corp.dev"],
                "fetchTool": {
                    "name": "fetch_doc",
                    "urlTransform": {
                        "regex": r"docs\.corp\.dev/([^/]+)/([^/?#]+)",
                        "params": {"namespace": "$1", "slug": "$2"},
                    },
                    "contentExtract": "data.body",
                },
            }
        }
    }


def test_configured_secrets_appear_in_no_file_and_no_output(
    pytester: pytest.Pytester,
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    openai_key, anthropic_key = sentinel("sk-openai"), sentinel("sk-ant")
    url_password, mcp_token = sentinel("pw"), sentinel("tok-mcp")
    basic = base64.b64encode(f"omkuser:{url_password}".encode()).decode()
    forbidden = {
        "OPENAI_API_KEY": openai_key,
        "ANTHROPIC_API_KEY": anthropic_key,
        "authorization header": f"Bearer {openai_key}",
        "base URL password": url_password,
        "basic auth header": basic,
        "MCP env token": mcp_token,
    }
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", openai_key)
    # A proxy password in the judge's base URL (httpx sends it as basic auth).
    monkeypatch.setenv(
        "ANTHROPIC_BASE_URL", fake_llm.base_url.replace("http://", f"http://omkuser:{url_password}@")
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_key)

    fake_llm.script(default="A plain answer.")
    fake_llm.add_rule("criterion-clarity", json.dumps({"score": 4, "reason": "clear"}), system=JUDGE_SYSTEM)
    fake_llm.add_rule("Summarise the refund policy", "Refunds are possible within 30 days.")
    fake_llm.add_rule("Quote the page", "The page says: Document refunds in policies.")
    fake_llm.add_rule("Say hello", "Hello there.")
    # A provider error that echoes the key back (some 401 messages do).
    fake_llm.inject(
        "status",
        every=True,
        match="Use the wrong key",
        status=401,
        message=f"Incorrect API key provided: {openai_key}. Header was: Bearer {openai_key}",
    )

    (pytester.path / ".mcp.json").write_text(json.dumps(mcp_config(mcp_token)), encoding="utf-8")
    write_samples(
        pytester,
        "eval-samples.json",
        {
            "schemaVersion": "omk.eval-sample-set/v2",
            "samples": [
                {
                    "sample_id": "judged",
                    "prompt": "Summarise the refund policy.",
                    "assertions": [{"type": "contains", "value": "30 days"}],
                    "rubric": {
                        "clarity": {"criterion": "criterion-clarity: the answer is clear", "weight": 1}
                    },
                },
                {
                    "sample_id": "resolved",
                    "prompt": "Quote the page https://docs.corp.dev/policies/refunds verbatim.",
                    "assertions": [{"type": "contains", "value": "Document refunds"}],
                },
                {
                    "sample_id": "failing",
                    "prompt": "Say hello.",
                    "assertions": [{"type": "contains", "value": "goodbye"}],
                },
                {"sample_id": "rejected", "prompt": "Use the wrong key, please."},
            ],
        },
    )
    before = files_under(pytester.path)
    result = run_pytest(
        pytester,
        "-v",
        "-rA",
        "--omk-executor=openai",
        "--omk-model=gpt-4o-mini",
        "--omk-judge=anthropic",
        "--omk-judge-model=claude-judge",
        "--omk-record-mode=new_episodes",
        "--omk-retries=0",
        "--omk-report=omk-report.json",
        "--junitxml=junit.xml",
    )
    # In process (the secrets reach it through the environment as they would a child pytest): what
    # it printed, and through capfd what reached the descriptors 1 and 2 themselves (the MCP
    # server's stderr, say), which a child's pipes would hold.
    held = capfd.readouterr()

    # The run did what it should: every secret was really used.
    samples = report_samples(load_report(pytester.path / "omk-report.json"))
    assert {k: v["outcome"] for k, v in samples.items()} == {
        "judged": "passed",
        "resolved": "passed",
        "failing": "failed",
        "rejected": "error",
    }, result.stdout.str()
    assert "API error 401" in samples["rejected"]["error"]
    # The MCP server received its token (it reports only the length) and its page reached the model.
    assert any(f"Token length: {len(mcp_token)}." in r.user for r in fake_llm.requests)
    sent = {(r.path, r.headers.get("authorization"), r.headers.get("x-api-key")) for r in fake_llm.requests}
    assert sent == {
        ("/v1/chat/completions", f"Bearer {openai_key}", None),
        ("/v1/messages", f"Basic {basic}", anthropic_key),
    }
    junit = parse_junit(pytester.path / "junit.xml")
    assert junit.cases["eval-samples.json::rejected"].errors
    # By default recordings live in pytest's cache directory (cache.mkdir("omk") is under "d/").
    recordings = audit_recordings(pytester.path / ".pytest_cache" / "d" / "omk" / "recordings")
    assert not recordings.problems
    assert {d.kind for d in recordings.documents} == {"execute", "judge", "fetch"}

    # ... and was never written: not in any new or changed file, not on stdout or stderr.
    written = {p: data for p, data in files_under(pytester.path).items() if before.get(p) != data}
    assert any(".pytest_cache" in p.parts for p in written)
    leaks = [
        f"{name} in {path.relative_to(pytester.path)}"
        for path, data in written.items()
        for name, value in forbidden.items()
        if value.encode() in data
    ]
    streams = {
        "stdout": result.stdout.str(),
        "stderr": result.stderr.str(),
        "fd 1": held.out,
        "fd 2": held.err,
    }
    leaks += [
        f"{name} in {stream}"
        for stream, text in streams.items()
        for name, value in forbidden.items()
        if value in text
    ]
    assert not leaks, leaks
    # The only file holding a secret is the one the user wrote it into.
    holders = [p.name for p, data in files_under(pytester.path).items() if mcp_token.encode() in data]
    assert holders == [".mcp.json"]


def test_a_configured_secret_in_a_prompt_is_scrubbed_from_recordings(
    pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, omk_run: Any
) -> None:
    key = sentinel("sk-openai")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    fake_llm.script(default=f"Done: the key {key} is now rotated.")  # the model echoes the key
    write_samples(
        pytester,
        "eval-samples.json",
        {
            "schemaVersion": "omk.eval-sample-set/v2",
            "samples": [
                {
                    "sample_id": "rotate",
                    "prompt": f"Rotate the API key {key} for me.",
                    "assertions": [{"type": "contains", "value": "rotated"}],
                }
            ],
        },
    )
    common = ("--omk-executor=openai", "--omk-judge=none", "--omk-recordings=recs", "-p", "no:cacheprovider")
    first = omk_run(*common, "--omk-record-mode=new_episodes", "--omk-report=first.json")
    first.assert_outcomes(passed=1)
    assert fake_llm.requests[0].body["messages"][-1]["content"] == f"Rotate the API key {key} for me."

    # The recording: the key is gone from the request and from the answer.
    audit = audit_recordings(pytester.path / "recs")
    assert not audit.problems and len(audit.documents) == 1
    raw = audit.documents[0].path.read_bytes()
    assert key.encode() not in raw
    stored = json.loads(raw)
    assert stored["request"]["prompt"] == "Rotate the API key [REDACTED] for me."
    assert stored["result"]["output"] == "Done: the key [REDACTED] is now rotated."

    # It still replays (the key hashes the real prompt); the replay shows the scrubbed answer.
    fake_llm.reset()
    replay = omk_run(*common, "--omk-record-mode=none", "--omk-report=replay.json")
    replay.assert_outcomes(passed=1)
    assert fake_llm.requests == []
    replayed = report_samples(load_report(pytester.path / "replay.json"))["rotate"]
    assert replayed["execution"]["output"] == "Done: the key [REDACTED] is now rotated."
    assert key not in replay.stdout.str()


@pytest.mark.multiprocess
def test_no_secret_reaches_the_agent_its_model_or_any_sink(
    pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent paths: Bash (``env``, every readable ``/proc/*/environ``, the base URL), a mock's
    ``return_file`` aimed at the process environment, tool outputs in the trace and the report."""
    openai_key, url_password = sentinel("sk-openai"), sentinel("pw")
    access_key, service_key = sentinel("aws"), sentinel("svc")
    forbidden = {
        "OPENAI_API_KEY": openai_key,
        "base URL password": url_password,
        "AWS_SECRET_ACCESS_KEY": access_key,
        "MY_SERVICE_KEY": service_key,
    }
    monkeypatch.setenv(
        "OPENAI_BASE_URL", fake_llm.openai_base_url.replace("http://", f"http://omkuser:{url_password}@")
    )
    monkeypatch.setenv("OPENAI_API_KEY", openai_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", access_key)
    monkeypatch.setenv("MY_SERVICE_KEY", service_key)
    fake_llm.script(default="Nothing found.")
    # The markers come first: without a sandbox every process's environment on the machine is
    # read, and past the tool's 30,000-character cap the rest of the output is cut off.
    snoop = "echo started; echo URL=$OPENAI_BASE_URL; env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'"
    fake_llm.add_rule(
        prompt="Snoop with bash",
        replies=[{"tool_calls": [{"name": "Bash", "arguments": {"command": snoop}}]}, "Nothing found."],
    )
    fake_llm.add_rule(
        prompt="Snoop with a mock",
        replies=[{"tool_calls": [{"name": "Read", "arguments": {"file_path": "env"}}]}, "Nothing found."],
    )
    write_samples(
        pytester,
        "eval-samples.json",
        {
            "schemaVersion": "omk.eval-sample-set/v2",
            "samples": [
                {
                    "sample_id": "bash",
                    "prompt": "Snoop with bash.",
                    "assertions": [{"type": "tools_called", "values": ["Bash"]}],
                },
                {
                    "sample_id": "mock",
                    "prompt": "Snoop with a mock.",
                    "mocks": [{"tool": "Read", "return_file": "/proc/self/environ"}],
                    "assertions": [{"type": "tools_called", "values": ["Read"]}],
                },
            ],
        },
    )
    before = files_under(pytester.path)
    result = run_pytest(
        pytester,
        "-v",
        "-rA",
        "--omk-executor=agent",
        # Let the base URL into Bash's allow-list: its password must still be stripped there.
        "--omk-agent-env=OPENAI_BASE_URL",
        "--omk-judge=none",
        "--omk-record-mode=new_episodes",
        "--omk-retries=0",
        "--omk-report=omk-report.json",
        "--junitxml=junit.xml",
        subprocess=True,
    )
    samples = report_samples(load_report(pytester.path / "omk-report.json"))
    assert {k: v["outcome"] for k, v in samples.items()} == {"bash": "passed", "mock": "passed"}, (
        result.stdout.str()
    )
    bash_output = samples["bash"]["execution"]["toolCalls"][0]["output"]
    assert bash_output.startswith("started\nURL=http://127.0.0.1")
    assert "outside the sample's directory" in samples["mock"]["execution"]["toolCalls"][0]["output"]

    # Not sent to the model (every request body, tool results included) ...
    sent = json.dumps([r.body for r in fake_llm.requests])
    leaks = [f"{name} sent to the model" for name, value in forbidden.items() if value in sent]
    # ... and not written anywhere, nor printed.
    written = {p: data for p, data in files_under(pytester.path).items() if before.get(p) != data}
    leaks += [
        f"{name} in {path.relative_to(pytester.path)}"
        for path, data in written.items()
        for name, value in forbidden.items()
        if value.encode() in data
    ]
    streams = {"stdout": result.stdout.str(), "stderr": result.stderr.str()}
    leaks += [
        f"{name} in {stream}"
        for stream, text in streams.items()
        for name, value in forbidden.items()
        if value in text
    ]
    assert not leaks, leaks
