"""``--omk-record-mode=rewrite`` prunes only the recordings of what it ran: another model's or another
endpoint's recordings stay, for built-in executors and for an app's own model calls alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, point_openai_at, sample, write_sample_set

KEY = "sk-rewrite-scope-sentinel-5d21"
ORDER = sample("order", "Where is my order?", assertions=[{"type": "contains", "value": "Monday"}])


def recordings(root: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.json")) if p.is_file()]


def models_recorded(root: Path) -> list[tuple[str, str]]:
    return sorted((d["label"], d["request"]["model"]) for d in recordings(root))


def test_rewrite_keeps_the_recordings_of_another_model(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_openai_at(fake_llm, monkeypatch, KEY)
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
        point_openai_at(other, monkeypatch, KEY)
        omk_run(*args, "--omk-record-mode=new_episodes").assert_outcomes(passed=1)
    point_openai_at(fake_llm, monkeypatch, KEY)
    omk_run(*args, "--omk-record-mode=new_episodes").assert_outcomes(passed=1)
    omk_run(*args, "--omk-record-mode=rewrite").assert_outcomes(passed=1)
    endpoints = sorted(d["endpoint"] for d in recordings(pytester.path / "rec"))
    assert (
        endpoints == sorted({d["endpoint"] for d in recordings(pytester.path / "rec")})
        and len(endpoints) == 2
    )


# --- an app's own model calls ------------------------------------------------------------------

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
