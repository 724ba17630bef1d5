"""Recordings that cannot lie: the endpoint in the key, vcrpy's record modes, and CI's default.

Two loopback fake servers stand for two providers serving the same model name: a recording made
against one must never replay as the other's answer, and a replay-only run must say which
endpoint differs. ``CI`` set with no mode given replays only, and nothing reaches a server.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import (
    OmkRun,
    load_report,
    point_openai_at,
    report_samples,
    run_pytest,
    sample,
    write_sample_set,
)

KEY = "sk-record-modes-sentinel-81c2d4"


@pytest.fixture
def server_b() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def recordings(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.json") if p.is_file())


def run_without_mode(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """Like ``omk_run`` but with no ``--omk-record-mode`` at all (the default applies)."""
    return run_pytest(pytester, *args)


ARGS = ("--omk-executor", "openai", "--omk-recordings", "rec")


def test_another_server_with_the_same_model_is_another_call(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    fake_llm: FakeLLM,
    server_b: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_sample_set(pytester, sample("s", "Say hi", assertions=[{"type": "contains", "value": "hi"}]))
    fake_llm.add_rule("Say hi", "hi from A")
    server_b.add_rule("Say hi", "hi from B")
    point_openai_at(fake_llm, monkeypatch, KEY)
    omk_run(*ARGS, "--omk-record-mode", "new_episodes").assert_outcomes(passed=1)
    point_openai_at(server_b, monkeypatch, KEY)
    again = omk_run(*ARGS, "--omk-record-mode", "new_episodes", "--omk-report", "b.json")
    again.assert_outcomes(passed=1)
    assert (len(fake_llm.requests), len(server_b.requests)) == (1, 1)
    report = json.loads((pytester.path / "b.json").read_text(encoding="utf-8"))
    assert report["samples"][0]["execution"] == {
        **report["samples"][0]["execution"],
        "replayed": False,
        "output": "hi from B",
    }
    stored = [json.loads(p.read_text(encoding="utf-8")) for p in recordings(pytester.path / "rec")]
    endpoints = sorted(d["endpoint"] for d in stored)
    port_a, port_b = (
        fake_llm.openai_base_url.split(":")[2].split("/")[0],
        server_b.openai_base_url.split(":")[2].split("/")[0],
    )
    assert endpoints == sorted(f"http://127.0.0.1:{p}/v1/chat/completions" for p in (port_a, port_b))
    for document in stored:
        assert KEY not in json.dumps(document)


def test_a_replay_miss_after_an_endpoint_change_names_the_endpoint(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    fake_llm: FakeLLM,
    server_b: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_sample_set(pytester, sample("s", "Say hi"))
    fake_llm.add_rule("Say hi", "hi")
    point_openai_at(fake_llm, monkeypatch, KEY)
    omk_run(*ARGS, "--omk-record-mode", "new_episodes")
    point_openai_at(server_b, monkeypatch, KEY)
    result = omk_run(*ARGS, "--omk-record-mode", "none")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*ReplayMissError*", "*Nearest recording: execute/*/s-*.json*", "*endpoint: 'http://127.0.0.1:*"]
    )
    assert (len(fake_llm.requests), len(server_b.requests)) == (1, 0)


def test_ci_set_and_no_mode_given_replays_only_and_calls_nothing(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_sample_set(pytester, sample("s", "Say hi", assertions=[{"type": "contains", "value": "hi"}]))
    fake_llm.add_rule("Say hi", "hi")
    point_openai_at(fake_llm, monkeypatch, KEY)
    omk_run(*ARGS, "--omk-record-mode", "new_episodes").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    replayed = run_without_mode(pytester, *ARGS, "-rA")
    replayed.assert_outcomes(passed=1)
    assert "model calls: 0 live, 1 replayed" in replayed.stdout.str()
    missed = run_without_mode(pytester, *ARGS, "--omk-model", "another-model")
    missed.assert_outcomes(errors=1)
    missed.stdout.fnmatch_lines(
        ["*--omk-record-mode=none only replays*", "*model: 'another-model' (this run)*"]
    )
    assert len(fake_llm.requests) == 1
    # An explicit mode still wins over CI's default.
    run_without_mode(
        pytester, *ARGS, "--omk-model", "another-model", "--omk-record-mode", "new_episodes"
    ).assert_outcomes(passed=1)
    assert len(fake_llm.requests) == 2


def test_once_records_a_new_file_but_not_a_new_sample_of_a_recorded_file(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_openai_at(fake_llm, monkeypatch, KEY)
    write_sample_set(pytester, sample("a1", "Say A1"), name="a/eval-samples.json")
    omk_run(*ARGS, "--omk-record-mode", "once").assert_outcomes(passed=1)
    assert len(fake_llm.requests) == 1
    write_sample_set(pytester, sample("a1", "Say A1"), sample("a2", "Say A2"), name="a/eval-samples.json")
    write_sample_set(pytester, sample("b1", "Say B1"), name="b/eval-samples.json")
    result = omk_run(*ARGS, "--omk-record-mode", "once", "-rA")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        ["*ReplayMissError*'a2'*once records only sample files that have no recordings yet*"]
    )
    assert sorted(r.user for r in fake_llm.requests) == ["Say A1", "Say B1"]
    stored = {json.loads(p.read_text(encoding="utf-8"))["file"] for p in recordings(pytester.path / "rec")}
    assert stored == {"../a/eval-samples.json", "../b/eval-samples.json"}


def test_rewrite_re_records_and_removes_what_the_run_did_not_use(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_openai_at(fake_llm, monkeypatch, KEY)
    write_sample_set(
        pytester, sample("kept", "Say kept"), sample("edited", "Say old"), name="a/eval-samples.json"
    )
    write_sample_set(pytester, sample("other", "Say other"), name="b/eval-samples.json")
    omk_run(*ARGS, "--omk-record-mode", "new_episodes", "--omk-repeat", "2").assert_outcomes(passed=3)
    assert len(recordings(pytester.path / "rec")) == 6
    write_sample_set(
        pytester, sample("kept", "Say kept"), sample("edited", "Say new"), name="a/eval-samples.json"
    )
    omk_run(*ARGS, "--omk-record-mode", "rewrite", "a").assert_outcomes(passed=2)
    left = sorted(
        (d["label"], d["request"]["prompt"], d["request"]["repeat"])
        for d in (json.loads(p.read_text(encoding="utf-8")) for p in recordings(pytester.path / "rec"))
    )
    # a's old prompt and second repeats are gone; b did not run, so its recordings stay.
    assert left == [
        ("edited", "Say new", 0),
        ("kept", "Say kept", 0),
        ("other", "Say other", 0),
        ("other", "Say other", 1),
    ]
    assert len(fake_llm.requests) == 6 + 2


# --- a teammate without a key: replays in every mode, one line for a call that must go live -----

SDK_APP = """
import openai


def answer(request):
    client = openai.OpenAI(max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": request.prompt}]
    )
    return reply.choices[0].message.content
"""

ORDER = sample("order", "Where is my order?", assertions=[{"type": "contains", "value": "Monday"}])
REFUND = sample("refund", "Can I get a refund?", assertions=[{"type": "contains", "value": "Monday"}])


@pytest.mark.floor("openai")
def test_without_a_key_recorded_app_calls_replay_and_a_live_call_fails_in_one_line(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch, fake_llm: FakeLLM
) -> None:
    pytest.importorskip("openai")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.makeini("[pytest]\npythonpath = .\n")
    (pytester.path / "sdkapp.py").write_text(SDK_APP, encoding="utf-8")
    fake_llm.add_rule("Where is my order", "It ships on Monday.")
    fake_llm.add_rule("refund", "Refunds ship on Monday.")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    write_sample_set(pytester, ORDER)
    app = ("--omk-executor", "python:sdkapp:answer", "--omk-recordings", "rec")
    omk_run(*app, record_mode="new_episodes").assert_outcomes(passed=1)
    assert len(fake_llm.requests) == 1

    # A teammate without a key, outside CI, in the default mode: the recorded call replays.
    monkeypatch.delenv("OPENAI_API_KEY")
    omk_run(*app, record_mode=None, ci=False).assert_outcomes(passed=1)

    # A sample never recorded needs a live call: one line, nothing sent upstream.
    write_sample_set(pytester, ORDER, REFUND)
    result = omk_run(*app, "--omk-report", "r.json", record_mode=None, ci=False)
    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert "no API key for a live call; set OPENAI_API_KEY or record first" in out
    assert "Traceback" not in out and "openai." not in out
    assert len(fake_llm.requests) == 1
    record = report_samples(load_report(pytester.path / "r.json"))["refund"]
    assert "no API key for a live call" in str(record)
