"""Token limits, context overflows, stop reasons, endpoints and a server that is not there, over
real HTTP against the fake model server."""

from __future__ import annotations

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, parse_junit, report_samples, sample, write_sample_set

PASSING = [{"type": "not_contains", "value": "never said"}]


@pytest.fixture
def llm(fake_llm_env: FakeLLM) -> FakeLLM:
    """The fake server, with both APIs' variables pointing at it."""
    return fake_llm_env


def test_no_token_limit_is_sent_unless_asked(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    write_sample_set(pytester, sample("s", "question", assertions=PASSING))
    omk_run("--omk-executor=openai").assert_outcomes(passed=1)
    assert "max_tokens" not in llm.requests[0].body
    assert "max_completion_tokens" not in llm.requests[0].body


@pytest.mark.parametrize("executor", ["openai", "anthropic"])
def test_max_tokens_limits_the_model_and_the_judge(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, executor: str
) -> None:
    llm.add_rule(reply='{"reasoning": "r", "score": 4, "reason": "ok"}', system="judge")
    write_sample_set(
        pytester,
        sample("s", "question", assertions=PASSING, rubric={"c": {"criterion": "clear", "weight": 1}}),
    )
    omk_run(f"--omk-executor={executor}", f"--omk-judge={executor}", "--omk-max-tokens=7").assert_outcomes(
        passed=1
    )
    assert [r.body["max_tokens"] for r in llm.requests] == [7, 7]


def test_max_tokens_must_be_a_positive_whole_number(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("s", "question", assertions=PASSING))
    result = omk_run("--omk-executor=openai", "--omk-max-tokens=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--omk-max-tokens*0*"])


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (500, "Context size has been exceeded."),
        (400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."),
        (400, "prompt is too long: 210000 tokens > 200000 maximum"),
    ],
)
def test_a_context_overflow_is_not_retried_and_says_so(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, status: int, message: str
) -> None:
    llm.add_rule(reply={"fault": "status", "status": status, "message": message})
    write_sample_set(pytester, sample("s", "question", assertions=PASSING))
    result = omk_run("--omk-executor=openai")
    result.assert_outcomes(errors=1)
    assert len(llm.requests) == 1
    result.stdout.fnmatch_lines(
        [f"*openai API error {status}: {message[:20]}*(context window exceeded: not retried)*"]
    )


def test_the_report_says_why_each_answer_stopped_and_where_it_came_from(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    llm.add_rule("cut me", {"text": "half an ans", "finish_reason": "length"})
    llm.add_rule("whole", {"text": "a whole answer", "finish_reason": "stop"})
    write_sample_set(
        pytester, sample("cut", "cut me", assertions=PASSING), sample("whole", "whole", assertions=PASSING)
    )
    result = omk_run("--omk-executor=openai", "--omk-report=r.json", "--junitxml=j.xml")
    result.assert_outcomes(passed=2)
    document = load_report(pytester.path / "r.json")
    records = report_samples(document)
    assert records["cut"]["execution"]["stopReason"] == "length"
    assert records["whole"]["execution"]["stopReason"] == "stop"
    assert records["cut"]["execution"]["endpoint"] == llm.openai_base_url + "/chat/completions"
    assert document["summary"]["cutOff"] == 1
    result.stdout.fnmatch_lines(["*answers cut at the token limit: 1*"])
    case = parse_junit(pytester.path / "j.xml").cases["eval-samples.json::cut"]
    assert case.props["omk.stop_reason"] == "length"
    assert case.props["omk.endpoint"] == llm.openai_base_url + "/chat/completions"


def test_the_endpoint_in_the_report_never_holds_credentials(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://user:hunter2@127.0.0.1:{llm.port}/v1?api-key=hunter2")
    write_sample_set(pytester, sample("s", "question", assertions=PASSING))
    omk_run("--omk-executor=openai", "--omk-report=r.json").assert_outcomes(passed=1)
    endpoint = report_samples(load_report(pytester.path / "r.json"))["s"]["execution"]["endpoint"]
    assert endpoint == llm.openai_base_url + "/chat/completions"
    assert "hunter2" not in (pytester.path / "r.json").read_text(encoding="utf-8")


def test_a_server_that_is_not_running_is_named(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    url = llm.openai_base_url + "/chat/completions"
    llm.stop()
    write_sample_set(pytester, sample("s", "question", assertions=PASSING))
    result = omk_run("--omk-executor=openai", "--omk-retries=1")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*cannot connect to {url}: is the server running? (after 1 retries)*"])
