"""Model-under-test conftests for end-to-end runs that count what reaches a loopback server."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support.documents import sample, write_sample_set

PRICED_CONFTEST = """
import os

import httpx

PRICE = float(os.environ["BUDGET_TEST_PRICE"])
# One client for every call, as an SDK keeps one (httpx.post would build one, certificates and all,
# per call).
CLIENT = httpx.Client(timeout=30)


def answer(request):
    reply = CLIENT.post(
        os.environ["BUDGET_TEST_URL"] + "/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": request.prompt}]},
        headers={"Authorization": "Bearer sk-test"},
    )
    text = reply.json()["choices"][0]["message"]["content"]
    return {"output": text, "costUSD": PRICE, "inputTokens": 10, "outputTokens": 5}


def pytest_omk_make_executor(config):
    return answer
"""
"""A Python-callable model under test that asks the server at ``BUDGET_TEST_URL`` for every answer
and reports ``BUDGET_TEST_PRICE`` dollars per call: calls are counted where they arrive."""


def priced_executor(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, url: str, price: float
) -> None:
    """Make :data:`PRICED_CONFTEST` the pytester project's model under test.

    It stands in for a model, so its whole answers are recorded and replayed (an app under test
    would run every time): ``omk_app_record = answers`` in the project's ini file.
    """
    monkeypatch.setenv("BUDGET_TEST_URL", url)
    monkeypatch.setenv("BUDGET_TEST_PRICE", str(price))
    pytester.makeconftest(PRICED_CONFTEST)
    pytester.makeini("[pytest]\nomk_app_record = answers\nomk_app_digest = version:1\n")


def priced_samples(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    server: FakeLLM,
    *,
    count: int,
    price: float,
    check: dict[str, Any],
) -> FakeLLM:
    """``count`` samples ``s00``, ``s01``, ... (``question 0``, ...) each checked by ``check``,
    answered "hello there" by ``server`` through :func:`priced_executor` at ``price`` a call."""
    server.add_rule(None, "hello there")
    priced_executor(pytester, monkeypatch, server.openai_base_url, price)
    write_sample_set(
        pytester, *[sample(f"s{i:02d}", f"question {i}", assertions=[check]) for i in range(count)]
    )
    return server


def point_openai_at(server: FakeLLM, monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    """Aim the OpenAI-compatible executor (and any SDK in the project) at a loopback fake server."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", key)
