"""The judge's structured output is a setting, a server that refuses it is judged without it (once
said, for the rest of the run), and an unusable reply is asked again and quoted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM, RecordedRequest
from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set
from tests.support.wrapped import unwrapped

KEY = "sk-structured-output-test-5b1c9e"
JUDGE_SYSTEM = "judge"
REFUSAL = {"fault": "status", "status": 400, "message": "Failed to initialize samplers: std::exception"}
JUDGED = [
    sample(
        f"s{i}",
        f"question {i}",
        assertions=[{"type": "faithfulness", "reference": "the sky is blue"}],
        rubric={"clarity": {"criterion": "clear", "weight": 1}},
    )
    for i in range(2)
]
RUN = ("--omk-executor=openai", "--omk-judge=openai", "--omk-report=r.json")
RUBRIC = {"clarity": {"criterion": "clear", "weight": 1}}


@pytest.fixture
def llm(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fake_llm.add_rule(reply=verdict(4), system=JUDGE_SYSTEM)
    return fake_llm


def verdict(score: int) -> str:
    return json.dumps({"reasoning": "checked", "score": score, "reason": "fine"})


def judge_bodies(llm: FakeLLM) -> list[dict[str, Any]]:
    return [r.body for r in llm.requests if JUDGE_SYSTEM in r.system]


def with_response_format(request: RecordedRequest) -> bool:
    return isinstance(request.body, dict) and "response_format" in request.body


def refusing(llm: FakeLLM, score: int) -> None:
    """Script ``llm`` as llama.cpp with a SentencePiece model: 400 to any response_format, and the
    verdict ``score`` to a judge call without one."""
    llm.reset()
    llm.add_rule(reply=REFUSAL, predicate=with_response_format)
    llm.add_rule(reply=verdict(score), system=JUDGE_SYSTEM)


def test_the_default_asks_for_a_json_object(pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM) -> None:
    write_sample_set(pytester, *JUDGED)
    omk_run(*RUN).assert_outcomes(passed=2)
    assert {json.dumps(b["response_format"]) for b in judge_bodies(llm)} == {'{"type": "json_object"}'}


def test_json_schema_sends_the_score_schema_of_each_kind_of_judgement(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    write_sample_set(pytester, *JUDGED)
    omk_run(*RUN, "--omk-judge-response-format=json_schema").assert_outcomes(passed=2)
    formats = [b["response_format"] for b in judge_bodies(llm)]
    assert {f["type"] for f in formats} == {"json_schema"}
    schemas = {tuple(f["json_schema"]["schema"]["required"]) for f in formats}
    # A rubric dimension reasons before it scores; a judged assertion only scores.
    assert schemas == {("reasoning", "score", "reason"), ("score", "reason")}
    for f in formats:
        schema = f["json_schema"]["schema"]
        assert schema["additionalProperties"] is False
        assert schema["properties"]["score"] == {"type": "integer", "enum": [1, 2, 3, 4, 5]}
        assert f["json_schema"]["strict"] is True


def test_none_sends_no_response_format(pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM) -> None:
    pytester.makeini("[pytest]\nomk_judge_response_format = none\n")
    write_sample_set(pytester, *JUDGED)
    omk_run(*RUN).assert_outcomes(passed=2)
    assert judge_bodies(llm) and not any("response_format" in b for b in judge_bodies(llm))


def test_an_unknown_setting_is_a_usage_error(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    write_sample_set(pytester, *JUDGED)
    result = omk_run(*RUN, "--omk-judge-response-format=json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--omk-judge-response-format must be one of json_object, json_schema, none, not 'json'*"]
    )


@pytest.mark.parametrize("setting", ["json_object", "json_schema"])
def test_a_refused_response_format_is_dropped_for_the_endpoint_and_said_once(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, setting: str
) -> None:
    refusing(llm, 4)
    write_sample_set(pytester, *JUDGED)
    result = omk_run(*RUN, f"--omk-judge-response-format={setting}", "--omk-concurrency=1")
    result.assert_outcomes(passed=2)
    refused = [r for r in llm.requests if with_response_format(r)]
    assert len(refused) == 1  # remembered: every later judge call went without it
    lines = [line for line in unwrapped(result).lines if f"refused response_format {setting}" in line]
    assert len(lines) == 1 and "Failed to initialize samplers" in lines[0]
    endpoint = llm.openai_base_url + "/chat/completions"
    assert endpoint in lines[0]
    summary = load_report(pytester.path / "r.json")["summary"]
    assert summary["judgeFormatRefused"][endpoint]["format"] == setting
    for record in report_samples(load_report(pytester.path / "r.json")).values():
        assert record["rubric"]["clarity"]["score"] == 4


def test_a_run_that_dropped_it_replays_in_ci_and_says_so_again(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    refusing(llm, 2)
    write_sample_set(pytester, *JUDGED)
    args = (*RUN, "--omk-recordings=rec", "--omk-concurrency=1")
    live = omk_run(*args, "--omk-record-mode=new_episodes")
    live.stdout.fnmatch_lines(["samples: 2  failed 2"])
    llm.stop()
    replay = omk_run(*args, "--omk-record-mode=none")
    replay.stdout.fnmatch_lines(["samples: 2  failed 2", "model calls: 0 live, *"])
    assert (
        len([line for line in unwrapped(replay).lines if "refused response_format json_object" in line]) == 1
    )


def test_a_400_that_is_not_about_the_format_says_what_was_sent(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    llm.reset()
    llm.add_rule(
        reply={"fault": "status", "status": 400, "message": "unknown model 'x'"}, system=JUDGE_SYSTEM
    )
    write_sample_set(pytester, *JUDGED[:1])
    result = omk_run(*RUN, "--omk-judge-model=x")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*openai API error 400: unknown model 'x'*sent with response_format json_object, and again without it*"
        ]
    )
    assert not any("refused response_format" in line for line in result.stdout.lines)


def test_an_unusable_reply_is_asked_again_when_failures_are_skipped_too(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    # docs/judge.md: an invalid reply is asked once more, whatever omk_judge_failure says.
    llm.reset()
    llm.add_rule(replies=["{  }", verdict(5)], system=JUDGE_SYSTEM)
    write_sample_set(pytester, sample("s", "question", rubric=RUBRIC))
    omk_run(*RUN, "--omk-judge-failure=skip").assert_outcomes(passed=1)
    assert len(judge_bodies(llm)) == 2
    assert report_samples(load_report(pytester.path / "r.json"))["s"]["rubric"]["clarity"]["score"] == 5


def test_a_reply_still_unusable_is_quoted(pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM) -> None:
    llm.reset()
    llm.add_rule(reply="{  }", system=JUDGE_SYSTEM)
    write_sample_set(pytester, sample("s", "question", rubric=RUBRIC))
    result = omk_run(*RUN)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*could not score rubric dimension 'clarity': judge reply: score is missing (the reply: '{  }')*"]
    )


@pytest.mark.multiprocess
def test_under_xdist_each_worker_learns_it_and_the_summary_says_it_once(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    refusing(llm, 4)
    write_sample_set(pytester, *JUDGED, *(sample(f"more{i}", f"more {i}", rubric=RUBRIC) for i in range(4)))
    result = omk_run(*RUN, "-n", "2", "--omk-concurrency=2")
    assert result.ret == 0
    assert (
        len([line for line in unwrapped(result).lines if "refused response_format json_object" in line]) == 1
    )
    # Each worker asked with it once at most per call in flight, then never again.
    assert 1 <= len([r for r in llm.requests if with_response_format(r)]) <= 2
