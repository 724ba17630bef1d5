"""The warning that the judge grades its own answers: one server under two names is one model,
two servers under one name are two (docs/judge.md)."""

from __future__ import annotations

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, sample, write_sample_set
from tests.support.wrapped import unwrapped

KEY = "sk-same-model-test-71c2aa"
WARNING = "the judge is the model under test"
RUBRIC = {"clarity": {"criterion": "clear", "weight": 1}}
VERDICT = '{"reasoning": "r", "score": 4, "reason": "ok"}'


def point(monkeypatch: pytest.MonkeyPatch, *, openai: FakeLLM, anthropic: FakeLLM) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def test_one_server_answering_both_names_with_one_model_is_the_judge_grading_itself(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A llama.cpp-like server: whatever name is asked for, its one model answers, and says so.
    point(monkeypatch, openai=fake_llm, anthropic=fake_llm)
    fake_llm.script(default={"text": "an answer", "model": "qwen2.5-7b.gguf"})
    fake_llm.add_rule(reply={"text": VERDICT, "model": "qwen2.5-7b.gguf"}, system="judge")
    write_sample_set(pytester, sample("s", "question", rubric=RUBRIC))
    args = ("--omk-executor=openai", "--omk-model=alpha", "--omk-judge=anthropic", "--omk-judge-model=beta")
    result = omk_run(*args)
    result.assert_outcomes(passed=1)
    lines = [line for line in unwrapped(result).lines if WARNING in line]
    assert len(lines) == 1 and "qwen2.5-7b.gguf" in lines[0] and fake_llm.base_url in lines[0]


def test_two_servers_serving_the_same_name_are_not_one_model(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLM() as judge:
        point(monkeypatch, openai=fake_llm, anthropic=judge)
        judge.add_rule(reply=VERDICT, system="judge")
        write_sample_set(pytester, sample("s", "question", rubric=RUBRIC))
        result = omk_run(
            "--omk-executor=openai", "--omk-model=tiny", "--omk-judge=anthropic", "--omk-judge-model=tiny"
        )
    result.assert_outcomes(passed=1)
    assert WARNING not in result.stdout.str()


def test_the_same_executor_and_name_still_warns_before_any_call(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    point(monkeypatch, openai=fake_llm, anthropic=fake_llm)
    fake_llm.add_rule(reply=VERDICT, system="judge")
    write_sample_set(pytester, sample("s", "question", rubric=RUBRIC))
    result = omk_run("--omk-executor=openai", "--omk-model=m", "--omk-judge=openai", "--omk-judge-model=m")
    assert len([line for line in result.stdout.lines if WARNING in line]) >= 1
