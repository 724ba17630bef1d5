"""The judge against llama.cpp: JSON mode, a JSON schema, a server that refuses both, and knowing
when the judge is the model under test."""

from __future__ import annotations

import pytest

from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set
from tests.support.llama_cpp import ANTHROPIC_PLACEHOLDER_KEY, LlamaServer, StartServer
from tests.support.wrapped import unwrapped

PASSING = {"type": "not_contains", "value": "the model will never say this"}
RUBRIC = {"clarity": {"criterion": "The answer is clear and to the point", "weight": 1}}
OPENAI_JUDGE = ("--omk-executor=openai", "--omk-judge=openai")
SKIP = "--omk-judge-failure=skip"
REFUSED = "Failed to initialize samplers"
"""llama.cpp's 400 when it cannot build the grammar sampler for ``response_format``."""


def judged(count: int) -> list[dict[str, object]]:
    return [
        sample(f"s{i}", f"question {i}: explain yourself", assertions=[PASSING], rubric=RUBRIC)
        for i in range(count)
    ]


def point_at(monkeypatch: pytest.MonkeyPatch, server: LlamaServer) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)


def two_servers(
    start: StartServer, monkeypatch: pytest.MonkeyPatch, judge_vocabulary: str
) -> tuple[LlamaServer, LlamaServer]:
    """A server for the model under test (``openai``) and another for the judge (``anthropic``)."""
    under_test, judge = start("bpe"), start(judge_vocabulary)
    point_at(monkeypatch, under_test)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", judge.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_PLACEHOLDER_KEY)
    return under_test, judge


def test_the_json_schema_setting_gets_a_score_from_every_reply(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_env: LlamaServer
) -> None:
    # The grammar holds the tiny model to the score schema: gibberish reasons, real scores.
    write_sample_set(pytester, *judged(4))
    result = omk_run(*OPENAI_JUDGE, "--omk-judge-response-format=json_schema", "--omk-report=r.json")
    assert result.ret in (0, 1)  # passed or failed by the judge's score; never an error
    readings = [
        r["rubric"]["clarity"] for r in report_samples(load_report(pytester.path / "r.json")).values()
    ]
    # Every reply has the schema's shape, so a score; only a blank reason (the schema cannot ask
    # for a non-blank one in OpenAI's strict mode) could still make one unusable.
    scored = [r for r in readings if r["status"] in ("pass", "fail")]
    assert all(r["score"] in (1, 2, 3, 4, 5) for r in scored)
    assert all("reason is missing or blank" in r["reason"] for r in readings if r not in scored)
    assert len(scored) >= 3


def test_a_json_mode_reply_without_a_score_is_quoted(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_env: LlamaServer
) -> None:
    # JSON mode makes the tiny model write some JSON object, never the one asked for.
    write_sample_set(pytester, *judged(2))
    omk_run(*OPENAI_JUDGE, SKIP, "--omk-report=r.json").assert_outcomes(passed=2)
    for record in report_samples(load_report(pytester.path / "r.json")).values():
        reason = record["rubric"]["clarity"]["reason"]
        assert reason.startswith("judge reply: score is missing (the reply: '{"), reason


@pytest.mark.parametrize("response_format", ["json_object", "json_schema"])
def test_a_server_refusing_structured_output_is_judged_without_it_for_the_rest_of_the_run(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    llama_server: StartServer,
    monkeypatch: pytest.MonkeyPatch,
    response_format: str,
) -> None:
    # The SentencePiece vocabulary with a space prefix: llama.cpp answers 400 to response_format.
    server = llama_server("spm")
    point_at(monkeypatch, server)
    write_sample_set(pytester, *judged(3))
    asked = f"--omk-judge-response-format={response_format}"
    result = omk_run(*OPENAI_JUDGE, asked, SKIP, "--omk-concurrency=1", "--omk-report=r.json")
    result.assert_outcomes(passed=3)  # the judge's gibberish is missing evidence, not an error
    said = [line for line in unwrapped(result).lines if f"refused response_format {response_format}" in line]
    assert len(said) == 1, result.stdout.str()
    assert server.openai_base_url in said[0] and REFUSED in said[0]
    # Asked once with it; every other judge call went without it.
    assert len(server.log_lines(REFUSED)) == 1
    document = load_report(pytester.path / "r.json")
    for record in report_samples(document).values():
        assert record["rubric"]["clarity"]["cause"] == "judge-reply"
    refused = document["summary"]["judgeFormatRefused"][server.openai_base_url + "/chat/completions"]
    assert refused["format"] == response_format and REFUSED in refused["reason"]


def test_one_server_asked_under_two_names_is_the_judge_grading_itself(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_env: LlamaServer
) -> None:
    # Both executors reach the same llama.cpp server, which serves its one model under any name.
    write_sample_set(pytester, *judged(1))
    result = omk_run(
        "--omk-executor=openai", "--omk-model=alpha", "--omk-judge=anthropic", "--omk-judge-model=beta", SKIP
    )
    unwrapped(result).fnmatch_lines([f"*the judge is the model under test*{llama_env.served_model}*"])


def test_two_servers_serving_the_same_name_are_two_models(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    two_servers(llama_server, monkeypatch, "spm")  # two models that both answer to "tiny"
    write_sample_set(pytester, *judged(1))
    models = ("--omk-model=tiny", "--omk-judge-model=tiny")
    result = omk_run("--omk-executor=openai", "--omk-judge=anthropic", *models, SKIP)
    assert "judge is the model under test" not in unwrapped(result).str()


def test_a_judge_failure_keeps_the_output_and_the_checks_in_the_report(
    pytester: pytest.Pytester, omk_run: OmkRun, llama_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    under_test, judge = two_servers(llama_server, monkeypatch, "bpe")
    judge.stop()  # the judge's server is gone; the model under test answers
    write_sample_set(pytester, *judged(1))
    result = omk_run(
        "--omk-executor=openai", "--omk-judge=anthropic", "--omk-retries=0", "--omk-report=r.json"
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*cannot connect to {judge.base_url}/v1/messages: is the server running?*"])
    record = report_samples(load_report(pytester.path / "r.json"))["s0"]
    assert record["outcome"] == "error"
    assert record["execution"]["output"] is not None
    assert record["execution"]["endpoint"] == under_test.openai_base_url + "/chat/completions"
    assert [(entry["type"], entry["status"]) for entry in record["assertions"]] == [("not_contains", "pass")]
