"""Credentials outside the naming rule never reach the agent's Bash (issue #43).

The agent's environment was the user's minus the variables whose names look like credentials
(``*_KEY``, ``*_TOKEN``...). Real credentials are often named otherwise: ``PGPASSWORD``,
``MYSQL_PWD``, ``GH_PAT``, ``SERVICE_APIKEY``, ``SLACK_WEBHOOK_URL``, ``GOOGLE_CREDENTIALS``. They
went through to ``Bash`` (inside bubblewrap too), so ``env`` handed them to the model, and from its
tool trace to the reports and the recordings. The environment is now an allow-list.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from pathlib import Path

import pytest

from pytest_omk.agent.environment import shell_environment
from tests.fakes.fake_llm import FakeLLM
from tests.support import load_report, report_samples, run_pytest, write_samples

probe = pytest.mark.probe


def credentials() -> dict[str, str]:
    """One sentinel per variable, each shaped as such credentials are."""
    tail = secrets.token_hex(8)
    return {
        "PGPASSWORD": f"pg-sentinel-{tail}",
        "MYSQL_PWD": f"mysql-sentinel-{tail}",
        "GH_PAT": f"ghp_sentinel{tail}",
        "SERVICE_APIKEY": f"apikey-sentinel-{tail}",
        "SLACK_WEBHOOK_URL": f"https://hooks.slack.example/services/T0/B0/hook-sentinel-{tail}",
        "GOOGLE_CREDENTIALS": json.dumps({"type": "service_account", "private_key": f"gcp-sentinel-{tail}"}),
    }


@probe("secrets")
def test_credentials_named_outside_the_rule_never_enter_the_shell_environment() -> None:
    given = {**credentials(), "PATH": os.environ["PATH"], "HOME": "/home/someone", "LANG": "C.UTF-8"}
    env = shell_environment(given)
    assert sorted(set(env) & set(credentials())) == []
    assert {name: env.get(name) for name in ("PATH", "HOME", "LANG")} == {
        "PATH": os.environ["PATH"],
        "HOME": "/home/someone",
        "LANG": "C.UTF-8",
    }


def files_under(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


@pytest.mark.multiprocess
@probe("secrets")
def test_bash_env_shows_the_model_no_credential_of_any_name(
    pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = credentials()
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(
        "OMK_PROBE_TOOL_HOME", "/opt/probe-tool"
    )  # a variable a tool needs, let through by name
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-openai-{secrets.token_hex(8)}")
    fake_llm.script(default="Nothing found.")
    fake_llm.add_rule(
        prompt="List the environment",
        replies=[
            {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo started; env"}}]},
            "Nothing found.",
        ],
    )
    write_samples(
        pytester,
        "eval-samples.json",
        {
            "schemaVersion": "omk.eval-sample-set/v2",
            "samples": [
                {
                    "sample_id": "env",
                    "prompt": "List the environment.",
                    "assertions": [{"type": "tools_called", "values": ["Bash"]}],
                },
            ],
        },
    )
    before = files_under(pytester.path)
    result = run_pytest(
        pytester,
        "-rA",
        "--omk-executor=agent",
        "--omk-judge=none",
        "--omk-record-mode=new_episodes",
        "--omk-recordings=recs",
        "--omk-retries=0",
        "--omk-report=r.json",
        "--junitxml=junit.xml",
        "-o",
        "omk_agent_env=OMK_PROBE_TOOL_HOME",
        subprocess=True,
    )
    sample = report_samples(load_report(pytester.path / "r.json"))["env"]
    assert sample["outcome"] == "passed", result.stdout.str()
    shown = sample["execution"]["toolCalls"][0]["output"]
    assert shown.startswith("started\n") and "PATH=" in shown  # env ran and printed
    assert "OMK_PROBE_TOOL_HOME=/opt/probe-tool" in shown and "OPENAI_BASE_URL" not in shown

    # Each value holds a distinctive token; no sink may hold any of them, in any encoding.
    tokens = {name: _token(value) for name, value in planted.items()}
    sent = json.dumps([r.body for r in fake_llm.requests])
    leaks = [f"{name} sent to the model" for name, token in tokens.items() if token in sent]
    written = {p: data for p, data in files_under(pytester.path).items() if before.get(p) != data}
    leaks += [
        f"{name} in {path.relative_to(pytester.path)}"
        for path, data in written.items()
        for name, token in tokens.items()
        if token.encode() in data
    ]
    streams = result.stdout.str() + result.stderr.str()
    leaks += [f"{name} printed" for name, token in tokens.items() if token in streams]
    assert not leaks, leaks


def _token(value: str) -> str:
    match = re.search(r"[a-z]+[-_]?sentinel-?[0-9a-f]{16}", value)
    assert match is not None
    return match.group(0)
