"""An app team's second week (issue 51): ``--omk-changed`` sees the app's code, a teammate
without a key replays, ``rewrite`` keeps other servers' and models' calls of an app."""

from __future__ import annotations

import json
import sys

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set

CHECK = [{"type": "contains", "value": "alpha"}]


def write_module(pytester: pytest.Pytester, answer: str) -> None:
    """``myapp.py`` answering ``answer`` (answers differ in length: no stale bytecode)."""
    text = f"def answer(request):\n    return {answer!r}\n"
    (pytester.path / "myapp.py").write_text(text, encoding="utf-8")


def test_changed_runs_an_app_sample_again_after_the_app_code_changed(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.makeini("[pytest]\npythonpath = .\n")
    write_sample_set(pytester, sample("a", "question", assertions=CHECK))
    write_module(pytester, "alpha")
    app = ("--omk-executor", "python:myapp:answer")
    omk_run(*app, "--omk-report", "base.json").assert_outcomes(passed=1)
    write_module(pytester, "gamma, not the first letter")
    sys.modules.pop("myapp", None)
    result = omk_run(*app, "--omk-baseline", "base.json", "--omk-changed", "--omk-report", "new.json")
    assert result.ret == 1
    record = report_samples(load_report(pytester.path / "new.json"))["a"]
    assert record["carried"] is False and record["outcome"] == "failed"
    result.stdout.fnmatch_lines(["omk: --omk-changed digests the app's module file*"])


def test_changed_still_carries_an_app_sample_whose_code_did_not_change(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.makeini("[pytest]\npythonpath = .\n")
    write_sample_set(pytester, sample("a", "question", assertions=CHECK))
    write_module(pytester, "alpha")
    app = ("--omk-executor", "python:myapp:answer")
    omk_run(*app, "--omk-report", "base.json").assert_outcomes(passed=1)
    result = omk_run(*app, "--omk-baseline", "base.json", "--omk-changed", "--omk-report", "new.json")
    assert report_samples(load_report(pytester.path / "new.json"))["a"]["carried"] is True
    assert "1 carried from base.json" in result.stdout.str()


def test_the_header_names_the_declared_app_digest(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.makeini("[pytest]\npythonpath = .\n")
    write_sample_set(pytester, sample("a", "question", assertions=CHECK))
    write_module(pytester, "alpha")
    omk_run("--omk-executor", "python:myapp:answer", "--omk-report", "base.json")
    result = omk_run(
        "--omk-executor",
        "python:myapp:answer",
        "--omk-app-digest",
        "myapp.py",
        "--omk-baseline",
        "base.json",
        "--omk-changed",
    )
    result.stdout.fnmatch_lines(["omk: --omk-changed digests the app as myapp.py"])


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

KEY = "sk-team-week-two-sentinel-71c3"
ORDER = sample("order", "Where is my order?", assertions=[{"type": "contains", "value": "Monday"}])
REFUND = sample("refund", "Can I get a refund?", assertions=[{"type": "contains", "value": "Monday"}])


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


# --- rewrite prunes an app's calls only within the endpoint and model it ran ------------------

HTTPX_APP = """
import os

import httpx


def answer(request):
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    body = {"model": os.environ["APP_MODEL"], "messages": [{"role": "user", "content": request.prompt}]}
    reply = httpx.post(base + "/chat/completions", json=body, timeout=30)
    reply.raise_for_status()
    return reply.json()["choices"][0]["message"]["content"]
"""


def recorded_calls(pytester: pytest.Pytester) -> list[tuple[str, str]]:
    """``(endpoint, model)`` of every recorded app call."""
    found = []
    for path in sorted((pytester.path / "rec").rglob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        found.append((str(document["endpoint"]), str(document["body"]["model"])))
    return sorted(found)


def test_rewrite_keeps_an_apps_recordings_of_another_server_and_model(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch, fake_llm: FakeLLM
) -> None:
    pytester.makeini("[pytest]\npythonpath = .\n")
    (pytester.path / "httpxapp.py").write_text(HTTPX_APP, encoding="utf-8")
    write_sample_set(pytester, ORDER)
    other = FakeLLM().start()
    try:
        for server in (fake_llm, other):
            server.add_rule("Where is my order", "It ships on Monday.")
        app = ("--omk-executor", "python:httpxapp:answer", "--omk-recordings", "rec")
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        for server, model in ((fake_llm, "small"), (other, "small"), (fake_llm, "large")):
            monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
            monkeypatch.setenv("APP_MODEL", model)
            omk_run(*app, record_mode="new_episodes").assert_outcomes(passed=1)
        before = recorded_calls(pytester)
        assert len(before) == 3 and len({endpoint for endpoint, _ in before}) == 2
        # Rewrite against the first server and model: only that pair's recordings are this run's.
        monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
        monkeypatch.setenv("APP_MODEL", "small")
        omk_run(*app, record_mode="rewrite").assert_outcomes(passed=1)
        assert recorded_calls(pytester) == before
    finally:
        other.stop()
