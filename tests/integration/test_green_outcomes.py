"""Green means green: no judge, tripwire or rewrite turns red into green, and the numbers add up.

Findings 5, 7, 9 and 10 of issue 42, end to end: the judge is only ever what the configuration
names (and recorded judge readings replay in CI without a key), a tripwire never hides an
infrastructure failure, ``rewrite`` prunes only the recordings of what it ran, and the judge's
calls, tokens and cost are shown apart from the model's in every report, errors included.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import (
    FakeCommand,
    OmkRun,
    judge_reply,
    load_report,
    parse_junit,
    report_samples,
    run_pytest,
    sample,
    write_sample_set,
)

KEY = "sk-green-outcomes-sentinel-7c3e"
JUDGE_SYSTEM = "judge"


def use(server: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def judged_sample() -> dict[str, Any]:
    return sample(
        "graded", "Say hi", assertions=[{"type": "contains", "value": "hi"}],
        rubric={"tone": {"criterion": "Is warm and friendly", "weight": 1}},
    )  # fmt: skip


# --- 5. the judge is what the configuration says -------------------------------------------------


def test_provider_variables_alone_choose_no_judge(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The app under test sets OPENAI_BASE_URL: that must not switch on a paid judge.
    use(fake_llm, monkeypatch)
    write_sample_set(pytester, judged_sample())
    result = omk_run("--omk-executor=echo")
    assert fake_llm.requests == []
    result.stdout.fnmatch_lines(["*judge readings missing: 1 (1 × no judge configured)*"])


def test_recorded_judge_readings_replay_in_ci_without_any_key(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(fake_llm, monkeypatch)
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
    use(fake_llm, monkeypatch)
    write_sample_set(pytester, judged_sample())
    fake_llm.add_rule("Is warm and friendly", json.dumps({"score": 1, "reason": "cold"}), system=JUDGE_SYSTEM)
    fake_llm.add_rule("Say hi", "hi")
    args = ("--omk-executor=openai", "--omk-recordings=rec")
    recorded = omk_run(*args, "--omk-judge=openai", "--omk-record-mode=new_episodes")
    recorded.stdout.fnmatch_lines(["*samples: 1  failed 1*"])
    monkeypatch.delenv("OPENAI_API_KEY")  # the endpoint stays: it is part of what a recording answers
    replayed = omk_run(*args, "--omk-record-mode=none")
    replayed.stdout.fnmatch_lines(["*recordings hold judge readings for 1 sample*--omk-judge*"])


# --- 7. a tripwire only excuses a model failure --------------------------------------------------


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed again)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def tripwire_samples(pytester: pytest.Pytester) -> None:
    write_sample_set(
        pytester,
        sample("trap", "Say hi", assertions=[{"type": "contains", "value": "never said"}], tripwire=True),
    )


def test_a_dead_server_on_a_tripwire_sample_is_an_error(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    tripwire_samples(pytester)
    result = omk_run("--omk-executor=openai", "--omk-retries=0", "--omk-timeout=5")
    result.assert_outcomes(errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_replay_miss_on_a_tripwire_sample_is_an_error(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    tripwire_samples(pytester)
    result = omk_run("--omk-executor=echo", "--omk-record-mode=none", "--omk-recordings=rec")
    result.assert_outcomes(errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_model_failure_on_a_tripwire_sample_is_still_expected(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    tripwire_samples(pytester)
    result = omk_run("--omk-executor=echo")
    result.assert_outcomes(xfailed=1)
    assert result.ret == pytest.ExitCode.OK


# --- 9. rewrite prunes only what it ran ----------------------------------------------------------


def recordings(root: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.json")) if p.is_file()]


def models_recorded(root: Path) -> list[tuple[str, str]]:
    return sorted((d["label"], d["request"]["model"]) for d in recordings(root))


def test_rewrite_keeps_the_recordings_of_another_model(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(fake_llm, monkeypatch)
    write_sample_set(pytester, *(sample(f"s{i}", f"task {i}") for i in range(4)))
    args = ("--omk-executor=openai", "--omk-recordings=rec")
    omk_run(*args, "--omk-model=gpt-4.1-mini", "--omk-record-mode=new_episodes").assert_outcomes(passed=4)
    omk_run(*args, "--omk-model=gpt-4o-mini", "--omk-record-mode=new_episodes").assert_outcomes(passed=4)
    assert len(recordings(pytester.path / "rec")) == 8
    write_sample_set(pytester, *(sample(f"s{i}", f"task {i}" if i else "task 0, edited") for i in range(4)))
    result = omk_run(*args, "--omk-model=gpt-4o-mini", "--omk-record-mode=rewrite")
    result.assert_outcomes(passed=4)
    expected = sorted(
        [(f"s{i}", "gpt-4.1-mini") for i in range(4)] + [(f"s{i}", "gpt-4o-mini") for i in range(4)]
    )
    assert models_recorded(pytester.path / "rec") == expected  # the old prompt's gpt-4o-mini answer went
    result.stdout.fnmatch_lines(["*rewrite removed 1 recording*"])


def test_rewrite_keeps_the_recordings_of_another_endpoint(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_sample_set(pytester, sample("s", "Say hi"))
    args = ("--omk-executor=openai", "--omk-recordings=rec")
    with FakeLLM() as other:
        use(other, monkeypatch)
        omk_run(*args, "--omk-record-mode=new_episodes").assert_outcomes(passed=1)
    use(fake_llm, monkeypatch)
    omk_run(*args, "--omk-record-mode=new_episodes").assert_outcomes(passed=1)
    omk_run(*args, "--omk-record-mode=rewrite").assert_outcomes(passed=1)
    endpoints = sorted(d["endpoint"] for d in recordings(pytester.path / "rec"))
    assert (
        endpoints == sorted({d["endpoint"] for d in recordings(pytester.path / "rec")})
        and len(endpoints) == 2
    )


# --- 10. every call counted, the judge's apart ---------------------------------------------------


def judge_answer(reply: dict[str, Any]) -> dict[str, Any]:
    return {**reply, "costUSD": 0.001, "inputTokens": 100, "outputTokens": 10}


def test_the_judge_is_counted_apart_and_errors_count_their_calls(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    fake_llm: FakeLLM,
    fake_judge: FakeCommand,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use(fake_llm, monkeypatch)
    fake_llm.add_rule("Say hi", {"text": "hi there", "usage": [10, 5]})
    write_sample_set(
        pytester,
        judged_sample(),
        sample("broken", "Say hi", rubric={"tone": {"criterion": "Is warm and friendly", "weight": 1}}),
    )
    judge = fake_judge.script(
        {"graded": judge_answer(judge_reply(4)), "broken": judge_answer({"output": "no JSON"})}
    )
    result = omk_run(
        "--omk-executor=openai", f"--omk-judge={judge}",
        "--omk-report=r.json", "--omk-html=r.html", "--omk-markdown=r.md", "--junitxml=j.xml",
    )  # fmt: skip
    result.assert_outcomes(passed=1, errors=1)
    # 2 model calls; the judge: 1 for "graded", 2 for "broken" (its unusable reply is asked again).
    result.stdout.fnmatch_lines([
        "*model calls: 5 live, 0 replayed*",
        "*model under test: 2 calls (2 live, 0 replayed), tokens 20 in / 10 out*",
        "*judge: 3 calls (3 live, 0 replayed), tokens 300 in / 30 out, $0.003*",
    ])  # fmt: skip
    document = load_report(pytester.path / "r.json")
    usage = document["summary"]["usage"]
    model_cost = usage["model"].pop("costUSD")  # the provider's price, when known for this endpoint
    # What the live calls spent now: the budget's figures, in the one per-role usage block.
    assert usage["model"].pop("spent")["tokens"] == 30
    assert usage["judge"].pop("spent") == {"costUSD": 0.003, "pricedCalls": 3, "unpricedCalls": 0, "tokens": 330,
                                           "unpricedTokens": 0, "estimatedCalls": 0}  # fmt: skip
    assert usage["model"] == {"calls": 2, "live": 2, "replayed": 0, "failed": 0, "inputTokens": 20,
                              "outputTokens": 10, "costUnknown": 0 if model_cost is not None else 2}  # fmt: skip
    assert usage["judge"] == {"calls": 3, "live": 3, "replayed": 0, "failed": 0, "inputTokens": 300,
                              "outputTokens": 30, "costUSD": 0.003, "costUnknown": 0}  # fmt: skip
    total = document["summary"]["costUSD"]
    assert total == round(0.003 + (model_cost or 0), 6)  # the judge's cost is in the run's
    samples = report_samples(document)
    assert samples["broken"]["outcome"] == "error"
    assert samples["broken"]["modelCalls"] == {"live": 3, "replayed": 0}
    assert samples["broken"]["usage"]["judge"]["calls"] == 2
    assert samples["graded"]["usage"]["judge"]["costUSD"] == 0.001
    junit = parse_junit(pytester.path / "j.xml")
    graded = junit.cases["eval-samples.json::graded"].props
    assert graded["omk.judge.cost_usd"] == "0.001000" and graded["omk.model.calls"] == "1"
    assert junit.cases["eval-samples.json::broken"].props["omk.judge.calls"] == "2"
    assert junit.suite_properties["omk.judge.cost_usd.total"] == "0.003000"
    assert junit.suite_properties["omk.cost_usd.total"] == f"{total:.6f}"
    for page in ("r.html", "r.md"):
        text = (pytester.path / page).read_text(encoding="utf-8")
        assert "judge" in text and "$0.003" in text, page
