"""Configuration errors stop the run before any item: exit code 4 and one message."""

from __future__ import annotations

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, sample, write_sample_set


def test_a_misspelled_executor_is_a_usage_error_with_a_suggestion(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_sample_set(pytester, sample("s1"), sample("s2"))
    result = omk_run("--omk-executor=opnai")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if "opnai" in line]
    assert len(errors) == 1, result.stderr.lines
    assert "did you mean openai?" in errors[0]
    assert "command:opnai" in errors[0]  # how to run such a command on purpose
    assert (
        omk_run("--omk-executor=echo", "--omk-judge=none").ret == pytest.ExitCode.OK
    )  # "none" turns the judge off
    judge = omk_run("--omk-executor=echo", "--omk-judge=antropic")
    assert judge.ret == pytest.ExitCode.USAGE_ERROR
    judge.stderr.fnmatch_lines(["*--omk-judge 'antropic'*did you mean anthropic?*"])


def test_an_existing_command_is_still_run_as_a_command(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("s1", "hello", assertions=[{"type": "contains", "value": "hello"}]))
    result = omk_run("--omk-executor=cat")  # cat echoes the request object: a JSON reply without output
    assert result.ret != pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["samples: 1  passed 1"])


def test_a_missing_key_for_a_live_call_is_a_usage_error_before_any_item(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_sample_set(pytester, sample("s1"), sample("s2"))
    result = omk_run("--omk-executor=openai", "--omk-recordings", "rec", "--omk-record-mode", "new_episodes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*OPENAI_API_KEY environment variable is not set*has no recording to replay*"]
    )
    assert "ERROR at setup" not in result.stdout.str()
    assert "s1" not in result.stdout.str().replace("eval-samples.json::s1", "")  # no item ran
    forced = omk_run("--omk-executor=anthropic", "--omk-record-mode", "all")
    assert forced.ret == pytest.ExitCode.USAGE_ERROR
    forced.stderr.fnmatch_lines(["*ANTHROPIC_API_KEY*--omk-record-mode=all calls the model live*"])


def test_no_key_is_needed_when_every_call_replays(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-config-errors-5d6e7f80")
    write_sample_set(pytester, sample("s1", "Say hi"))
    args = ("--omk-executor=anthropic", "--omk-recordings", "rec", "--omk-record-mode", "new_episodes")
    omk_run(*args).assert_outcomes(passed=1)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    omk_run(*args).assert_outcomes(passed=1)
    omk_run(
        "--omk-executor=anthropic", "--omk-recordings", "rec", "--omk-record-mode", "none"
    ).assert_outcomes(passed=1)
    write_sample_set(pytester, sample("s1", "Say hi"), sample("s2", "Say more"))
    more = omk_run(*args)
    assert more.ret == pytest.ExitCode.USAGE_ERROR
    more.stderr.fnmatch_lines(["*ANTHROPIC_API_KEY*sample 'eval-samples.json::s2' has no recording*"])
    assert len(fake_llm.requests) == 1


def test_an_agent_env_entry_that_is_no_variable_name_is_a_usage_error(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_sample_set(pytester, sample("s1"))
    result = omk_run(
        "--omk-executor=echo", "--omk-judge=none", "--omk-agent-env=JAVA_HOME", "--omk-agent-env=A=B"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--omk-agent-env (ini omk_agent_env) must be environment variable names*'A=B'*"]
    )
    pytester.makeini("[pytest]\nomk_agent_env = JAVA_HOME GOPATH\n")
    assert omk_run("--omk-executor=echo", "--omk-judge=none").ret == pytest.ExitCode.OK
