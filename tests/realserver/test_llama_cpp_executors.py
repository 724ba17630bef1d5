"""The ``openai`` and ``anthropic`` executors answered by llama.cpp's own server (real inference).

What only a real server shows: its own token counts and stop reasons, its answer to a prompt over
the context window, queueing beyond its slots, and what a run says when the server is gone.
"""

from __future__ import annotations

import pytest

from tests.support import OmkRun, load_report, report_samples, run_pytest, sample, write_sample_set
from tests.support.llama_cpp import LlamaServer, StartServer

PASSING = [{"type": "not_contains", "value": "the model will never say this"}]


def samples(count: int, prefix: str = "question") -> list[dict[str, object]]:
    return [sample(f"s{i}", f"{prefix} {i}: what do you know?", assertions=PASSING) for i in range(count)]


@pytest.mark.parametrize("executor", ["openai", "anthropic"])
def test_both_api_executors_are_answered_by_llama_cpp(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_env: LlamaServer, executor: str
) -> None:
    write_sample_set(pytester, *samples(3))
    result = omk_run("--omk-executor", executor, "--omk-model=tiny", "--omk-report=r.json")
    result.assert_outcomes(passed=3)
    for record in report_samples(load_report(pytester.path / "r.json")).values():
        execution = record["execution"]
        # llama.cpp's own counts: the ChatML-wrapped prompt is longer than its words.
        assert execution["inputTokens"] > 8
        assert isinstance(execution["outputTokens"], int)
        assert execution["replayed"] is False
        assert record["executor"] == executor


def test_record_then_replay_under_ci_with_the_server_stopped(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_env: LlamaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_sample_set(pytester, *samples(4))
    args = ("--omk-executor=openai", "--omk-model=tiny", "--omk-recordings=rec")
    omk_run(*args, "--omk-record-mode=all", "--omk-report=live.json").assert_outcomes(passed=4)
    llama_env.stop()
    # CI set and no record mode given: replay only (omk_run would add --omk-record-mode=off).
    monkeypatch.setenv("CI", "true")
    replay = run_pytest(pytester, *args, "--omk-report=replay.json")
    replay.assert_outcomes(passed=4)
    live = report_samples(load_report(pytester.path / "live.json"))
    again = report_samples(load_report(pytester.path / "replay.json"))
    for sample_id, record in live.items():
        assert again[sample_id]["execution"]["output"] == record["execution"]["output"]
        assert again[sample_id]["execution"]["outputTokens"] == record["execution"]["outputTokens"]
        assert again[sample_id]["execution"]["replayed"] is True
    assert load_report(pytester.path / "replay.json")["summary"]["modelCalls"] == {"live": 0, "replayed": 4}


def test_more_calls_in_flight_than_slots_queue_in_the_server_and_all_answer(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # HTTP threads to spare: the calls wait for the slot, not for a thread to read them (with
    # llama-server's default of slots + 2 threads on a small machine, the connections beyond the
    # threads wait out another connection's 5 s keep-alive first: 11 s for this test).
    server = llama_server(slots=1, http_threads=12)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    write_sample_set(pytester, *samples(10))
    result = omk_run("--omk-executor=openai", "--omk-concurrency=8", "--omk-report=r.json")
    result.assert_outcomes(passed=10)
    # One slot served all ten, one task at a time.
    launched = server.log_lines("launch_slot_")
    assert len(launched) == 10
    assert all("id  0 |" in line for line in launched)
