"""Fault injection end to end: real executors, real HTTP, retries and the adaptive limiter.

About 30 % of the fake server's answers are faults (seeded). Every call must end with its own
scripted reply or with an ``ExecutionError`` naming the fault that ended it: never another call's
reply, never a half-read one.

Attempts are counted on the client side, where the retry decision is made: the server's log
cannot tell a reply that arrived from one the client gave up on (a loaded machine can push a
normal reply past the timeout), so it is only used to check that the faults fired.
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict

import pytest

from pytest_omk.errors import ExecutionError
from pytest_omk.execute.anthropic import AnthropicExecutor
from pytest_omk.execute.base import Executor
from pytest_omk.execute.openai import OpenAIExecutor
from pytest_omk.execute.retry import AdaptiveLimiter, RetryPolicy, call_with_retries
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from tests.fakes.fake_llm import FakeLLM

CALLS = 50
# A normal reply cut off by a loaded machine is counted like a hang (the client decides), so the
# test holds either way; one second keeps that rare and the hangs cheap.
TIMEOUT = 1.0
# What the error message says for each fault the server can end a call with.
SIGNATURES = {
    "rate_limit": "API error 429",
    "server_error": "API error 500",
    "unavailable": "API error 503",
    "garbage": "malformed response",
    "drop": "connection dropped",
    "hang": f"timed out after {TIMEOUT:g}s",
}


def script_faults(server: FakeLLM, seed: int) -> None:
    for i in range(CALLS):
        server.add_rule(f"<q{i:02d}>", f"answer {i:02d}")
    # Seven triggers at 5 % each, tried in order: about 30 % of answers are faults. slow_body
    # delivers the right reply, only slowly (well within the timeout).
    for n, kind in enumerate([*SIGNATURES, "slow_body"]):
        server.inject(
            kind,
            probability=0.05,
            seed=seed + n,
            retry_after="0" if kind == "rate_limit" else None,
            seconds=0.002 if kind == "slow_body" else 5.0,
        )


async def run_all(
    executor: Executor, attempts: dict[int, list[str]]
) -> list[ExecutionResult | BaseException]:
    """Make the calls; ``attempts[i]`` gets one entry per attempt: ``ok`` or the error's text."""
    policy = RetryPolicy(retries=2, base_delay=0.005, max_delay=0.02)
    limiter = AdaptiveLimiter(8)
    rng = random.Random(0)

    async def one(i: int) -> ExecutionResult:
        request = ExecutionRequest(prompt=f"Question <q{i:02d}>: what is the answer?")

        async def attempt() -> ExecutionResult:
            try:
                result = await executor.execute(request)
            except Exception as exc:
                attempts[i].append(str(exc))
                raise
            attempts[i].append("ok")
            return result

        result, retries = await call_with_retries(attempt, policy=policy, limiter=limiter, rng=rng)
        return result.model_copy(update={"retries": retries})

    try:
        return await asyncio.gather(*(one(i) for i in range(CALLS)), return_exceptions=True)
    finally:
        await executor.aclose()


@pytest.mark.parametrize(("api", "seed"), [("openai", 11), ("anthropic", 29)])
def test_faults_end_in_the_right_reply_or_a_named_error(fake_llm: FakeLLM, api: str, seed: int) -> None:
    script_faults(fake_llm, seed)
    executor: Executor = (
        OpenAIExecutor(TIMEOUT, base_url=fake_llm.openai_base_url)
        if api == "openai"
        else AnthropicExecutor(TIMEOUT, base_url=fake_llm.base_url, api_key="sk-ant-test")
    )
    attempts: dict[int, list[str]] = defaultdict(list)
    outcomes = asyncio.run(run_all(executor, attempts))

    faults_served = sum(r.outcome not in ("reply", "slow_body") for r in fake_llm.requests)
    assert faults_served >= 5, "the seeded faults should have fired"

    errors = 0
    for i, outcome in enumerate(outcomes):
        seen = attempts[i]
        assert "ok" not in seen[:-1], "a call that succeeded was retried"
        if isinstance(outcome, ExecutionResult):
            assert outcome.output == f"answer {i:02d}"
            assert seen[-1] == "ok"
            assert outcome.retries == len(seen) - 1
        else:
            errors += 1
            assert isinstance(outcome, ExecutionError), repr(outcome)
            assert len(seen) == 3, seen
            assert any(signature in seen[-1] for signature in SIGNATURES.values()), seen
            assert seen[-1] in str(outcome)
            assert str(outcome).endswith("(after 2 retries)")
    assert errors < CALLS // 5
