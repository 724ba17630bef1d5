"""End to end: ``--omk-judge-probe length`` judges every output again with neutral filler appended;
a judge that rewards length fails ``--omk-max-judge-bias``. The probe's calls are recorded and
counted as judge calls, and the gate holds on a replay under ``CI=true`` with no key."""

from __future__ import annotations

import json

import pytest

from pytest_omk.judge.probe import FILLER, filler
from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, sample, write_sample_set

SCORES = [3, 2, 4, 3, 1]


def test_a_judge_that_rewards_length_fails_the_bias_gate(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-probe-test-31ff")
    samples = []
    for i, score in enumerate(SCORES):
        # The padded answer (the output, a blank line, the filler): this judge gives it 2 points more.
        padded = json.dumps({"score": min(5, score + 2), "reason": "long"})
        fake_llm.add_rule(f"ANSWER{i} is short\n\n{FILLER[:30]}", padded, system="judge")
        fake_llm.add_rule(f"ANSWER{i}", json.dumps({"score": score, "reason": "plain"}), system="judge")
        fake_llm.add_rule(f"QUESTION{i}", f"ANSWER{i} is short")
        samples.append(
            sample(f"s{i}", f"QUESTION{i}", rubric={"depth": {"criterion": "thorough", "weight": 1}})
        )
    write_sample_set(pytester, *samples)
    args = ("--omk-executor=openai", "--omk-judge=openai", "--omk-recordings=rec", "--omk-judge-probe=length")
    live = omk_run(*args, "--omk-record-mode=all", "--omk-report=live.json")
    assert live.ret in (0, 1), live.stdout.str()
    assert (
        load_report(pytester.path / "live.json")["summary"]["modelCalls"]["live"] == 15
    )  # 5 answers, 10 judge
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("CI", "true")
    calls = len(fake_llm.requests)

    result = omk_run(*args, "--omk-record-mode=none", "--omk-max-judge-bias=0.5", "--omk-report=r.json")
    assert len(fake_llm.requests) == calls
    text = result.stdout.str()
    assert result.ret == 1, text
    shifts = [min(5, s + 2) - s for s in SCORES]
    assert f"depth: mean shift {sum(shifts) / len(shifts):+.2f} with filler appended" in text
    assert "FAILED: judge length bias beyond --omk-max-judge-bias 0.5: depth" in text
    report = load_report(pytester.path / "r.json")
    assert [s["judgeProbe"]["depth"] for s in report["samples"]] == shifts
    assert report["judgeProbe"]["depth"]["beyond"] is True
    assert report["summary"]["modelCalls"]["replayed"] == 15


def test_the_filler_is_neutral_deterministic_and_about_as_long_as_the_output() -> None:
    assert filler(500) == filler(500) and 400 < len(filler(500)) <= 500
    assert filler(3) == FILLER.rstrip()  # at least one whole sentence
    assert "question" in FILLER and not any(ch.isdigit() for ch in filler(1000))


def test_the_bias_gate_needs_the_probe(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("s", "q"))
    result = omk_run("--omk-executor=echo", "--omk-max-judge-bias=0.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--omk-max-judge-bias needs --omk-judge-probe length" in result.stderr.str()
