"""A rerun by pytest-rerunfailures asks the model again (a further take), and replays take by take."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, sample, write_sample_set

pytestmark = pytest.mark.floor("pytest-rerunfailures")
"""Every test here drives pytest-rerunfailures itself: its lowest version runs them too (.ci/lowest)."""

pytest.importorskip("pytest_rerunfailures")

ARGS = ("--omk-executor", "openai", "--omk-recordings", "rec", "--reruns", "2", "-p", "no:randomly")


def outcomes(result: pytest.RunResult) -> dict[str, int]:
    return {k: v for k, v in result.parseoutcomes().items() if k not in ("warning", "warnings")}


@pytest.fixture
def llm(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-reruns-sentinel-0c1d2e3f")
    return fake_llm


def test_each_rerun_is_a_fresh_model_call_recorded_as_a_take(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    write_sample_set(pytester, sample("flaky", "Say yes", assertions=[{"type": "contains", "value": "yes"}]))
    llm.add_rule("Say yes", replies=["no", "still no", "yes"])
    result = omk_run(*ARGS, "--omk-record-mode", "new_episodes")
    assert outcomes(result) == {"passed": 1, "rerun": 2}
    assert len(llm.requests) == 3  # one call per attempt, not one graded three times
    takes = sorted(
        json.loads(p.read_text(encoding="utf-8"))["request"]["take"]
        for p in Path(pytester.path, "rec").rglob("*.json")
    )
    assert takes == [0, 1, 2]
    # Replay follows the takes: the same attempts, the same answers, no call.
    replay = omk_run(*ARGS, "--omk-record-mode", "none")
    assert outcomes(replay) == {"passed": 1, "rerun": 2}
    assert len(llm.requests) == 3


def test_an_executor_error_is_retried_by_a_rerun_with_a_new_call(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    write_sample_set(pytester, sample("s", "Say yes", assertions=[{"type": "contains", "value": "yes"}]))
    llm.inject("status", status=400, first=1)
    llm.add_rule("Say yes", "yes")
    result = omk_run(*ARGS, "--omk-record-mode", "off")
    assert outcomes(result) == {"passed": 1, "rerun": 1}
    assert len(llm.requests) == 2


def test_a_replayed_rerun_with_no_take_of_its_own_replays_the_last_take(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    """Recorded without reruns, replayed in CI with ``--reruns``: each rerun replays take 0, so the
    failed check stays FAILED with its reason (it was an ERROR: ``ReplayMissError ... take 1``)."""
    write_sample_set(pytester, sample("s", "Say yes", assertions=[{"type": "contains", "value": "yes"}]))
    llm.add_rule("Say yes", "no")
    recorded = omk_run("--omk-executor", "openai", "--omk-recordings", "rec", "-p", "no:randomly",
                       "--omk-record-mode", "new_episodes")  # fmt: skip
    assert recorded.ret == pytest.ExitCode.TESTS_FAILED
    replay = omk_run(*ARGS, "--omk-record-mode", "none", "--omk-report", "r.json")
    assert outcomes(replay) == outcomes(recorded) | {"rerun": 2}, replay.stdout.str()
    assert len(llm.requests) == 1  # every attempt replayed
    out = replay.stdout.str()
    assert "expected the output to contain 'yes'" in out and "ReplayMissError" not in out
    (row,) = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))["samples"]
    assert row["outcome"] == "failed" and row["error"] is None and row["execution"]["replayed"]


def test_the_record_counts_the_calls_of_every_attempt(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    """Issue 51, item 3: the attempts a rerun follows made their calls all the same."""
    write_sample_set(pytester, sample("flaky", "Say yes", assertions=[{"type": "contains", "value": "yes"}]))
    llm.add_rule("Say yes", replies=["no", "still no", "yes"])
    omk_run(*ARGS, "--omk-record-mode", "off", "--omk-report", "r.json")
    assert len(llm.requests) == 3
    [record] = json.loads(Path(pytester.path, "r.json").read_text(encoding="utf-8"))["samples"]
    assert record["modelCalls"] == {"live": 3, "replayed": 0}  # before: only the last attempt's one
    assert record["usage"]["model"]["calls"] == 3
