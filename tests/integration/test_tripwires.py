"""A tripwire sample expects a model failure, and only that: a dead server or a replay miss on it is
an ERROR that fails the run, never an expected failure."""

from __future__ import annotations

import socket

import pytest

from tests.support import OmkRun, sample, write_sample_set

KEY = "sk-tripwire-sentinel-3a9f"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed again)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def tripwire_samples(pytester: pytest.Pytester) -> None:
    write_sample_set(
        pytester,
        sample("trap", "Say hi", assertions=[{"type": "contains", "value": "never said"}], tripwire=True),
    )


def test_a_dead_server_on_a_tripwire_sample_is_an_error(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    tripwire_samples(pytester)
    result = omk_run("--omk-executor=openai", "--omk-retries=0", "--omk-timeout=5")
    result.assert_outcomes(errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_replay_miss_on_a_tripwire_sample_is_an_error(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    tripwire_samples(pytester)
    result = omk_run("--omk-executor=echo", "--omk-record-mode=none", "--omk-recordings=rec")
    result.assert_outcomes(errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_model_failure_on_a_tripwire_sample_is_still_expected(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    tripwire_samples(pytester)
    result = omk_run("--omk-executor=echo")
    result.assert_outcomes(xfailed=1)
    assert result.ret == pytest.ExitCode.OK
