"""The agent's Bash gets no credential through a locale look-alike or a URL form (issue #49, 16).

Three holes of the allow-list: every ``LC_*`` name passed by prefix (``LC_DEPLOY_TOKEN``), a proxy
URL without a scheme kept its password (``HTTPS_PROXY=user:pw@proxy:3128``, added with
``--omk-agent-env`` as the docs suggest), and only the first URL of a list
(``PIP_EXTRA_INDEX_URL``) lost its userinfo. The scrubber did not know these forms either, so the
proxy password an answer repeated reached the JSON/HTML reports and the recording.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from pytest_omk.agent.environment import shell_environment
from pytest_omk.recordings.scrub import Scrubber
from tests.fakes.fake_llm import FakeLLM
from tests.support import load_report, report_samples, write_samples

probe = pytest.mark.probe


def planted() -> dict[str, str]:
    tail = secrets.token_hex(8)
    return {
        "LC_DEPLOY_TOKEN": f"lcdeploy{tail}",
        "HTTPS_PROXY": f"builder:proxypw{tail}@proxy.corp:3128",
        "PIP_EXTRA_INDEX_URL": (
            f"https://ci:firstpw{tail}@pypi.corp/simple,https://ci:secondpw{tail}@mirror.corp/simple"
            f" ci:thirdpw{tail}@cache.corp:8080;https://fourth:fourthpw{tail}@other.corp/"
        ),
    }


def tokens(values: dict[str, str]) -> list[str]:
    """The distinctive secret part of each planted value (what must appear nowhere)."""
    tail = values["LC_DEPLOY_TOKEN"].removeprefix("lcdeploy")
    return [
        f"lcdeploy{tail}",
        *(f"{word}{tail}" for word in ("proxypw", "firstpw", "secondpw", "thirdpw", "fourthpw")),
    ]


@probe("secrets")
def test_only_real_locale_variables_and_no_userinfo_in_any_url_form() -> None:
    given = {**planted(), "LC_TIME": "C", "LC_ALL": "C.UTF-8", "LANGUAGE": "en"}
    env = shell_environment(given, ["HTTPS_PROXY", "PIP_EXTRA_INDEX_URL"])
    assert env == {
        "LC_TIME": "C",
        "LC_ALL": "C.UTF-8",
        "LANGUAGE": "en",
        "HTTPS_PROXY": "proxy.corp:3128",
        "PIP_EXTRA_INDEX_URL": (
            "https://pypi.corp/simple,https://mirror.corp/simple cache.corp:8080;https://other.corp/"
        ),
    }
    scrubber = Scrubber.from_environment(given)
    said = " ".join(given.values())
    # LC_DEPLOY_TOKEN is masked by its name (*_TOKEN); every URL password by its form.
    assert [t for t in tokens(given) if t in scrubber.text(said)] == []


def files_under(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


@pytest.mark.multiprocess
@probe("secrets")
def test_bash_env_and_every_sink_hold_no_proxy_or_index_password(
    pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = planted()
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-openai-{secrets.token_hex(8)}")
    # The model repeats the proxy setting it was never shown (it learned it elsewhere): the
    # scrubber must know the scheme-less form to keep it out of the reports and the recording.
    fake_llm.add_rule(
        prompt="List the environment",
        replies=[
            {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo started; env"}}]},
            f"Proxy in use: {values['HTTPS_PROXY']}",
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
    result = pytester.runpytest_subprocess(
        "-p",
        "no:hypothesispytest",
        "-p",
        "no:anyio",
        "-rA",
        "--omk-executor=agent",
        "--omk-judge=none",
        "--omk-record-mode=new_episodes",
        "--omk-recordings=recs",
        "--omk-retries=0",
        "--omk-report=r.json",
        "--omk-html=r.html",
        "--omk-markdown=r.md",
        "--junitxml=junit.xml",
        "-o",
        "omk_agent_env=HTTPS_PROXY PIP_EXTRA_INDEX_URL",
    )
    sample = report_samples(load_report(pytester.path / "r.json"))["env"]
    assert sample["outcome"] == "passed", result.stdout.str()
    shown = sample["execution"]["toolCalls"][0]["output"]
    assert "HTTPS_PROXY=proxy.corp:3128" in shown  # the variable arrived, without its userinfo
    assert "pypi.corp/simple" in shown and "cache.corp:8080" in shown

    sent = json.dumps([r.body for r in fake_llm.requests])
    leaks = [f"{token} sent to the model" for token in tokens(values) if token in sent]
    written = {p: data for p, data in files_under(pytester.path).items() if before.get(p) != data}
    assert any(p.suffix == ".json" and "recs" in p.parts for p in written)  # a recording was made
    leaks += [
        f"{token} in {path.relative_to(pytester.path)}"
        for path, data in written.items()
        for token in tokens(values)
        if token.encode() in data
    ]
    streams = result.stdout.str() + result.stderr.str()
    leaks += [f"{token} printed" for token in tokens(values) if token in streams]
    assert not leaks, leaks
