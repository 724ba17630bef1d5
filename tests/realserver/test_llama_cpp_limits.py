"""Token limits, context limits, prices and a server that is gone, as llama.cpp really answers them."""

from __future__ import annotations

import pytest

from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set
from tests.support.llama_cpp import LlamaServer, StartServer
from tests.support.wrapped import unwrapped

PASSING = {"type": "not_contains", "value": "the model will never say this"}


def questions(count: int, *extra: dict[str, object]) -> list[dict[str, object]]:
    return [
        sample(f"s{i}", f"question {i}: tell me more", assertions=[PASSING, *extra]) for i in range(count)
    ]


def test_a_local_model_asked_for_by_an_openai_name_gets_no_made_up_price(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_env: LlamaServer
) -> None:
    # llama.cpp answers whatever model name is asked for; its tokens are not OpenAI's to bill.
    write_sample_set(pytester, *questions(2, {"type": "cost_max", "value": 1.0}))
    result = omk_run("--omk-executor=openai", "--omk-model=gpt-4o-mini", "--omk-report=r.json")
    result.assert_outcomes(passed=2)
    document = load_report(pytester.path / "r.json")
    for record in report_samples(document).values():
        assert record["execution"]["costUSD"] is None
        cost_max = record["assertions"][1]
        assert (cost_max["status"], cost_max.get("cause")) == ("missing", "no-telemetry")
    assert document["summary"]["costUSD"] is None


def test_prices_from_the_ini_file_price_any_endpoint(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_env: LlamaServer
) -> None:
    # One line per model, USD per million tokens: here 5 cents per input token and 10 per output token
    # (the highest prices allowed are 100,000 USD per million tokens).
    pytester.makeini("[pytest]\nomk_prices =\n    tiny = 50000 100000\n")
    write_sample_set(pytester, *questions(2))
    omk_run("--omk-executor=openai", "--omk-model=tiny", "--omk-report=r.json").assert_outcomes(passed=2)
    for record in report_samples(load_report(pytester.path / "r.json")).values():
        execution = record["execution"]
        expected = 0.05 * execution["inputTokens"] + 0.1 * execution["outputTokens"]
        assert execution["costUSD"] == pytest.approx(expected)


@pytest.mark.parametrize("executor", ["openai", "anthropic"])
def test_max_tokens_reaches_the_server_and_cut_answers_are_counted(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_env: LlamaServer, executor: str
) -> None:
    write_sample_set(pytester, *questions(6))
    result = omk_run("--omk-executor", executor, "--omk-max-tokens=2", "--omk-report=r.json")
    result.assert_outcomes(passed=6)
    document = load_report(pytester.path / "r.json")
    executions = [record["execution"] for record in report_samples(document).values()]
    assert all(execution["outputTokens"] <= 2 for execution in executions)
    cut_reason = {"openai": "length", "anthropic": "max_tokens"}[executor]
    cut = sum(execution["stopReason"] == cut_reason for execution in executions)
    assert cut >= 1  # the tiny model ends a turn after about 8 tokens: most answers are cut
    assert document["summary"]["cutOff"] == cut
    unwrapped(result).fnmatch_lines([f"*answers cut at the token limit: {cut}*"])


@pytest.fixture
def short_context(llama_server: StartServer, monkeypatch: pytest.MonkeyPatch) -> LlamaServer:
    """A server with 256 tokens of context (llama.cpp's least) whose model never ends its turn, the
    ``openai`` executor's."""
    server = llama_server(context=256, ignore_eos=True)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    return server


def test_an_answer_cut_by_the_context_window_says_so(
    pytester: pytest.Pytester, omk_run: OmkRun, short_context: LlamaServer
) -> None:
    # No token limit: the answer runs until the context is full and ends there, as "length" (the
    # prompt takes 245 of the 256 tokens, and this server's model never ends its turn).
    write_sample_set(pytester, sample("long", "hello " * 77, assertions=[PASSING]))
    omk_run("--omk-executor=openai", "--omk-report=r.json").assert_outcomes(passed=1)
    document = load_report(pytester.path / "r.json")
    assert report_samples(document)["long"]["execution"]["stopReason"] == "length"
    assert document["summary"]["cutOff"] == 1


def test_a_prompt_over_the_context_window_is_not_retried_and_says_so(
    pytester: pytest.Pytester, omk_run: OmkRun, short_context: LlamaServer
) -> None:
    write_sample_set(pytester, sample("huge", "hello " * 400, assertions=[PASSING]))
    result = omk_run("--omk-executor=openai", "--omk-report=r.json")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*exceeds the available context size*context window exceeded: not retried*"])
    assert len(short_context.log_lines("exceeds the available context size")) == 1


@pytest.mark.parametrize("executor", ["openai", "anthropic"])
def test_a_stopped_server_is_named_with_the_question_whether_it_runs(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_env: LlamaServer, executor: str
) -> None:
    llama_env.stop()
    write_sample_set(pytester, *questions(1))
    result = omk_run("--omk-executor", executor, "--omk-retries=0")
    result.assert_outcomes(errors=1)
    path = "/v1/chat/completions" if executor == "openai" else "/v1/messages"
    result.stdout.fnmatch_lines([f"*cannot connect to {llama_env.base_url}{path}: is the server running?*"])
    assert "All connection attempts failed" not in result.stdout.str()
