"""The judge is only ever what the configuration names: the provider variables an app sets switch on
no paid judge, recorded judge readings replay in CI without a key, and judge recordings a run
ignores for want of a judge are named in its summary."""

from __future__ import annotations

import json

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, judged_sample, point_openai_at, run_pytest, write_sample_set

KEY = "sk-judge-selection-sentinel-7c3e"
JUDGE_SYSTEM = "judge"


def test_provider_variables_alone_choose_no_judge(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The app under test sets OPENAI_BASE_URL: that must not switch on a paid judge.
    point_openai_at(fake_llm, monkeypatch, KEY)
    write_sample_set(pytester, judged_sample())
    result = omk_run("--omk-executor=echo")
    assert fake_llm.requests == []
    result.stdout.fnmatch_lines(["*judge readings missing: 1 (1 × no judge configured)*"])


def test_recorded_judge_readings_replay_in_ci_without_any_key(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_openai_at(fake_llm, monkeypatch, KEY)
    pytester.makeini("[pytest]\nomk_judge = openai\nomk_recordings = rec\n")
    write_sample_set(pytester, judged_sample())
    fake_llm.add_rule("Is warm and friendly", json.dumps({"score": 1, "reason": "cold"}), system=JUDGE_SYSTEM)
    fake_llm.add_rule("Say hi", "hi")
    recorded = omk_run("--omk-executor=openai", "--omk-record-mode=new_episodes")
    recorded.stdout.fnmatch_lines(["*samples: 1  failed 1*"])
    calls = len(fake_llm.requests)
    monkeypatch.delenv("OPENAI_API_KEY")  # the endpoint stays: it is part of what a recording answers
    monkeypatch.setenv("CI", "true")
    replayed = run_pytest(pytester, "--omk-executor=openai")  # fmt: skip
    # The recorded 1/5 reading, read again: still red.
    replayed.stdout.fnmatch_lines(["*samples: 1  failed 1*"])
    assert replayed.ret == pytest.ExitCode.TESTS_FAILED
    assert len(fake_llm.requests) == calls


def test_judge_recordings_ignored_for_want_of_a_judge_are_named_in_the_summary(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_openai_at(fake_llm, monkeypatch, KEY)
    write_sample_set(pytester, judged_sample())
    fake_llm.add_rule("Is warm and friendly", json.dumps({"score": 1, "reason": "cold"}), system=JUDGE_SYSTEM)
    fake_llm.add_rule("Say hi", "hi")
    args = ("--omk-executor=openai", "--omk-recordings=rec")
    recorded = omk_run(*args, "--omk-judge=openai", "--omk-record-mode=new_episodes")
    recorded.stdout.fnmatch_lines(["*samples: 1  failed 1*"])
    monkeypatch.delenv("OPENAI_API_KEY")  # the endpoint stays: it is part of what a recording answers
    replayed = omk_run(*args, "--omk-record-mode=none")
    replayed.stdout.fnmatch_lines(["*recordings hold judge readings for 1 sample*--omk-judge*"])
