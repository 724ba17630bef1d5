"""``--omk-otel``: the run exported as one OpenTelemetry trace to a real OTLP/HTTP receiver on
loopback (decoded with the official protobuf definitions), under xdist too, without content unless
asked, and failing open when the collector cannot be reached."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import FakeCommand, OmkRun, executor_arg, sample, write_sample_set
from tests.support.commands import judge_reply
from tests.support.otlp import OtlpReceiver, ReceivedSpan
from tests.support.wrapped import unwrapped

pytestmark = pytest.mark.floor("opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http")
"""The OpenTelemetry SDK and exporter export every span here: their lowest versions run them too."""

PROMPT_MARK = "PROMPT-MARK-7f3a"
OUTPUT_MARK = "OUTPUT-MARK-91c2"
REASON_MARK = "REASON-MARK-c0de"
HEADER_SECRET = "otel-header-secret-5d8e1b"
EVALUATION = "gen_ai.evaluation.result"


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    started = OtlpReceiver().start()
    yield started
    started.stop()


@pytest.fixture
def otel_env(monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver) -> OtlpReceiver:
    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_SAMPLER", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"x-team-key={HEADER_SECRET}")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "evals-ci")
    return receiver


def project(pytester: pytest.Pytester, fake_command: FakeCommand, fake_judge: FakeCommand) -> list[str]:
    """Three samples (one passes, one fails an assertion, one judged) and the options to run them."""
    rubric = {"clarity": {"criterion": "the reply is clear", "weight": 1}}
    write_sample_set(
        pytester,
        sample("good", prompt=f"say good {PROMPT_MARK}", assertions=[{"type": "contains", "value": "good"}]),
        sample("bad", prompt="say bad", assertions=[{"type": "contains", "value": "NEVER-THERE"}]),
        sample("judged", prompt="say judged", rubric=rubric),
    )
    answer = {"inputTokens": 11, "outputTokens": 7, "costUSD": 0.002, "stopReason": "stop"}
    script = {sid: {**answer, "output": f"{sid} {OUTPUT_MARK}"} for sid in ("good", "bad", "judged")}
    judge = fake_judge.script({"*": judge_reply(4, REASON_MARK)})
    return [executor_arg(fake_command.script(script)), f"--omk-judge={judge}", "--omk-judge-model=judge-m"]


def by_name(spans: list[ReceivedSpan]) -> dict[str, ReceivedSpan]:
    return {span.name: span for span in spans}


def evaluations(span: ReceivedSpan) -> dict[str, dict[str, object]]:
    assert all(name == EVALUATION for name, _ in span.events), span.events
    return {str(attrs["gen_ai.evaluation.name"]): attrs for _, attrs in span.events}


def test_one_trace_with_sample_spans_call_spans_and_evaluation_events(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand,
    otel_env: OtlpReceiver,
) -> None:  # fmt: skip
    args = project(pytester, fake_command, fake_judge)
    result = omk_run(*args, "--omk-otel", "--omk-model=m-under-test")
    result.assert_outcomes(passed=2, failed=2)  # the failed sample and its check
    spans = otel_env.spans
    assert len({span.trace_id for span in spans}) == 1, "one trace per run"
    (run,) = [span for span in spans if span.name == "omk.run"]
    assert run.parent_span_id == ""
    assert run.attributes["omk.samples.passed"] == 2 and run.attributes["omk.samples.failed"] == 1
    assert run.attributes["test.suite.run.status"] == "failure"
    assert run.resource["service.name"] == "evals-ci"
    samples = {
        span.attributes["omk.sample_id"]: span for span in spans if span.name.startswith("omk.sample ")
    }
    assert sorted(samples) == ["bad", "good", "judged"]
    assert all(span.parent_span_id == run.span_id for span in samples.values())
    good, bad, judged = samples["good"], samples["bad"], samples["judged"]
    assert good.attributes["omk.outcome"] == "passed" and good.attributes["test.case.result.status"] == "pass"
    assert good.attributes["omk.nodeid"] == "eval-samples.json::good"
    assert good.attributes["omk.score.composite"] == 5
    assert bad.attributes["omk.outcome"] == "failed" and bad.status_code == 2
    # The calls: the model under test below each sample, the judge below the judged one.
    calls = [span for span in spans if span.parent_span_id == good.span_id]
    assert [span.name for span in calls] == ["chat m-under-test"]
    call = calls[0]
    assert call.kind == 3  # CLIENT
    assert call.attributes["gen_ai.operation.name"] == "chat"
    assert call.attributes["gen_ai.request.model"] == "m-under-test"
    assert call.attributes["gen_ai.usage.input_tokens"] == 11
    assert call.attributes["gen_ai.usage.output_tokens"] == 7
    assert call.attributes["omk.cost_usd"] == pytest.approx(0.002)
    assert call.attributes["omk.replayed"] is False and call.attributes["omk.role"] == "model"
    assert call.attributes["gen_ai.response.finish_reasons"] == ["stop"]
    judge_calls = by_name([span for span in spans if span.parent_span_id == judged.span_id])
    assert sorted(judge_calls) == ["chat judge-m", "chat m-under-test"]
    assert judge_calls["chat judge-m"].attributes["omk.role"] == "judge"
    assert judge_calls["chat judge-m"].attributes["omk.calls"] == 1
    # The evaluation events, on the sample spans.
    passed = evaluations(good)
    assert passed["assertion 0: contains"]["gen_ai.evaluation.score.label"] == "pass"
    assert passed["assertion 0: contains"]["gen_ai.evaluation.score.value"] == 1.0
    assert passed["layer: composite"]["gen_ai.evaluation.score.value"] == 5
    failed = evaluations(bad)["assertion 0: contains"]
    assert (
        failed["gen_ai.evaluation.score.label"] == "fail" and failed["gen_ai.evaluation.score.value"] == 0.0
    )
    rubric = evaluations(judged)["rubric: clarity"]
    assert rubric["gen_ai.evaluation.score.value"] == 4 and rubric["gen_ai.evaluation.score.label"] == "pass"
    assert "layer: judge" in evaluations(judged)
    # No content unless asked: no prompt, output, judge reason or failure message left the machine.
    sent = b"".join(otel_env.raw)
    for mark in (PROMPT_MARK, OUTPUT_MARK, REASON_MARK, "NEVER-THERE"):
        assert mark.encode() not in sent, mark
    assert "gen_ai.evaluation.explanation" not in failed
    # The headers came from the standard variable, and are not in what was sent.
    assert all(headers.get("x-team-key") == HEADER_SECRET for headers in otel_env.headers)
    assert HEADER_SECRET.encode() not in sent
    assert "OpenTelemetry export" not in result.stdout.str()


def test_content_only_with_omk_otel_content(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand,
    otel_env: OtlpReceiver, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("OMK_TEST_API_KEY", "sk-leaky-0123456789")
    args = project(pytester, fake_command, fake_judge)
    fake_command.script(
        {**fake_command.answers, "good": {"output": f"good {OUTPUT_MARK} sk-leaky-0123456789"}}
    )
    omk_run(*args, "--omk-otel", "--omk-otel-content").assert_outcomes(
        passed=2, failed=2
    )  # the failed sample and its check
    samples = {
        span.attributes["omk.sample_id"]: span
        for span in otel_env.spans
        if span.name.startswith("omk.sample ")
    }
    call = next(span for span in otel_env.spans if span.parent_span_id == samples["good"].span_id)
    assert PROMPT_MARK in call.attributes["gen_ai.input.messages"]
    assert OUTPUT_MARK in call.attributes["gen_ai.output.messages"]
    assert evaluations(samples["judged"])["rubric: clarity"]["gen_ai.evaluation.explanation"] == REASON_MARK
    explanation = evaluations(samples["bad"])["assertion 0: contains"]["gen_ai.evaluation.explanation"]
    assert "NEVER-THERE" in str(explanation)
    # Secrets are scrubbed as everywhere, content or not.
    assert b"sk-leaky-0123456789" not in b"".join(otel_env.raw)
    assert "[REDACTED]" in call.attributes["gen_ai.output.messages"]


@pytest.mark.multiprocess
def test_xdist_workers_export_into_the_run_trace(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand,
    otel_env: OtlpReceiver,
) -> None:  # fmt: skip
    args = project(pytester, fake_command, fake_judge)
    pytester.makeini("[pytest]\nomk_otel = true\n")  # the ini key, this time
    omk_run(*args, "-n", "2").assert_outcomes(passed=2, failed=2)  # the failed sample and its check
    spans = otel_env.spans
    assert len({span.trace_id for span in spans}) == 1
    (run,) = [span for span in spans if span.name == "omk.run"]
    assert run.resource["omk.worker"] == "controller"
    assert run.attributes["omk.samples.passed"] == 2 and run.attributes["omk.samples.failed"] == 1
    samples = [span for span in spans if span.name.startswith("omk.sample ")]
    assert len(samples) == 3, "each sample once: the controller does not export the workers' again"
    assert all(span.parent_span_id == run.span_id for span in samples)
    assert {span.resource["omk.worker"] for span in samples} <= {"gw0", "gw1"}
    calls = [span.parent_span_id for span in spans if span.attributes.get("gen_ai.operation.name") == "chat"]
    assert sorted(calls.count(span.span_id) for span in samples) == [1, 1, 2]  # the judged one: 2


@pytest.mark.parametrize("extra", [[], pytest.param(["-n", "2"], marks=pytest.mark.multiprocess)])
def test_an_unreachable_collector_costs_one_warning_and_no_failure(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand,
    monkeypatch: pytest.MonkeyPatch, extra: list[str],
) -> None:  # fmt: skip
    closed = OtlpReceiver().start()
    endpoint = closed.endpoint
    closed.stop()  # nothing listens on that loopback port now: connections are refused
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    args = project(pytester, fake_command, fake_judge)
    result = omk_run(*args, "--omk-otel", *extra)
    result.assert_outcomes(passed=2, failed=2)  # the failed sample and its check
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the failing sample's, not the export's
    lines = [line for line in unwrapped(result).lines if "OpenTelemetry" in line]
    assert len(lines) == 1, lines  # one line for the controller and both workers
    assert f"OpenTelemetry export to {endpoint}/v1/traces failed" in lines[0]
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_without_the_extra_it_is_a_usage_error_naming_it(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    args = project(pytester, fake_command, fake_judge)
    for name in [n for n in sys.modules if n.startswith("pytest_omk.plugin.otel_export")]:
        monkeypatch.delitem(sys.modules, name)
    # As if not installed: the SDK and every part of it an earlier test imported.
    for name in ["opentelemetry.sdk", *[n for n in sys.modules if n.startswith("opentelemetry.sdk.")]]:
        monkeypatch.setitem(sys.modules, name, None)
    result = omk_run(*args, "--omk-otel")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--omk-otel needs the OpenTelemetry SDK*pip install 'pytest-omk[[]otel[]]'*"]
    )
    assert not fake_command.called()


def test_content_without_the_trace_is_a_usage_error(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand
) -> None:
    args = project(pytester, fake_command, fake_judge)
    result = omk_run(*args, "--omk-otel-content")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: omk: --omk-otel-content needs --omk-otel*"])


def test_a_sample_whose_spans_cannot_be_built_is_one_warning(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand,
    otel_env: OtlpReceiver, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    # Imported through sys.modules: pytester drops what an earlier in-process run imported.
    otel = importlib.import_module("pytest_omk.report.otel")
    real = otel.sample_span

    def broken_for_bad(wire: dict[str, Any], *args: Any) -> Any:
        if wire["sample_id"] == "bad":
            raise ValueError("a record this version cannot read")
        return real(wire, *args)

    monkeypatch.setattr(otel, "sample_span", broken_for_bad)
    args = project(pytester, fake_command, fake_judge)
    result = omk_run(*args, "--omk-otel")
    result.assert_outcomes(passed=2, failed=2)  # the failed sample and its check
    lines = [line for line in unwrapped(result).lines if "OpenTelemetry" in line]
    assert len(lines) == 1 and "eval-samples.json::bad's spans were not built" in lines[0], lines
    names = sorted(span.name for span in otel_env.spans if span.name.startswith("omk.sample "))
    assert names == ["omk.sample good", "omk.sample judged"], "the others were still exported"


def test_an_exporter_the_sdk_cannot_set_up_is_a_usage_error(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    otel_export = importlib.import_module("pytest_omk.plugin.otel_export")

    def refuse(*args: Any) -> None:
        raise ValueError("OTEL_EXPORTER_OTLP_CERTIFICATE: no such file")

    monkeypatch.setattr(otel_export.Exporter, "__init__", refuse)
    args = project(pytester, fake_command, fake_judge)
    result = omk_run(*args, "--omk-otel")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: omk: --omk-otel: the OpenTelemetry exporter cannot be set up*no such file"]
    )


def test_http_calls_recorded_then_replayed(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm_env: FakeLLM, otel_env: OtlpReceiver
) -> None:
    # The openai executor and judge against the loopback fake: live first, then from the recordings.
    judge_says = '{"score": 5, "reason": "fine"}'
    fake_llm_env.add_rule("clear", judge_says, system="impartial judge")
    fake_llm_env.add_rule("Say hi", "hi there")
    rubric = {"clarity": {"criterion": "clear", "weight": 1}}
    write_sample_set(
        pytester, sample("hi", "Say hi", assertions=[{"type": "starts_with", "value": "hi"}], rubric=rubric)
    )
    args = [
        "--omk-otel",
        "--omk-executor=openai",
        "--omk-model=gpt-x",
        "--omk-judge=openai",
        "--omk-recordings=rec",
    ]
    for mode, replayed in (("new_episodes", False), ("none", True)):
        otel_env.spans.clear()
        omk_run(*args, f"--omk-record-mode={mode}").assert_outcomes(passed=1)
        (sample_span,) = [span for span in otel_env.spans if span.name == "omk.sample hi"]
        calls = by_name([span for span in otel_env.spans if span.parent_span_id == sample_span.span_id])
        model, judge = calls["chat gpt-x"], calls["chat"]
        assert model.attributes["gen_ai.provider.name"] == "openai"
        assert model.attributes["omk.replayed"] is replayed, mode
        assert model.attributes["gen_ai.usage.input_tokens"] > 0
        assert judge.attributes["omk.role"] == "judge" and judge.attributes["omk.replayed"] is replayed
        assert judge.attributes["omk.calls.replayed"] == (1 if replayed else 0)


def test_each_rerun_of_a_sample_is_a_span_of_its_own(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand,
    otel_env: OtlpReceiver,
) -> None:  # fmt: skip
    args = project(pytester, fake_command, fake_judge)
    omk_run(*args, "--omk-otel", "--reruns=1")
    bad = [span for span in otel_env.spans if span.name == "omk.sample bad"]
    assert [span.attributes["omk.outcome"] for span in bad] == [
        "rerun",
        "failed",
    ]  # pytest-rerunfailures' word
    assert "test.case.result.status" not in bad[0].attributes
    (run,) = [span for span in otel_env.spans if span.name == "omk.run"]
    assert run.attributes["omk.samples.rerun"] == 1 and run.attributes["omk.samples.failed"] == 1
