"""Opt-in checks against real provider APIs (they cost money and need the network).

Skipped unless ``OMK_LIVE_TESTS=1`` and the provider's key are set::

    OMK_LIVE_TESTS=1 OPENAI_API_KEY=sk-... pytest tests/live -m live_api
"""

from __future__ import annotations

import asyncio
import os

import pytest

from pytest_omk.models.run import ExecutionRequest
from pytest_omk.run.executors import make_executor

pytestmark = pytest.mark.live_api


def _require(key: str) -> None:
    if os.environ.get("OMK_LIVE_TESTS") != "1" or not os.environ.get(key):
        pytest.skip(f"live provider test: set OMK_LIVE_TESTS=1 and {key} to run it")


@pytest.mark.parametrize(("spec", "key"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
def test_a_real_provider_answers_and_reports_usage(spec: str, key: str) -> None:
    _require(key)

    async def go() -> None:
        executor = make_executor(spec, timeout=60)
        try:
            result = await executor.execute(
                ExecutionRequest(prompt="Reply with the single word: pong", system="Be terse.")
            )
        finally:
            await executor.aclose()
        assert "pong" in result.output.lower()
        assert result.inputTokens and result.outputTokens

    asyncio.run(go())


@pytest.mark.multiprocess
def test_a_real_judge_scores_a_rubric_dimension(pytester: pytest.Pytester) -> None:
    _require("OPENAI_API_KEY")
    pytester.makefile(
        ".yaml",
        **{
            "eval-samples": """
schemaVersion: omk.eval-sample-set/v2
samples:
  - sample_id: capital
    prompt: What is the capital of France? Answer in one sentence.
    assertions: [{type: contains, value: Paris}]
    rubric:
      correct: {criterion: States that Paris is the capital of France, weight: 1}
"""
        },
    )
    result = pytester.runpytest_subprocess(
        "--omk-executor",
        "openai",
        "--omk-judge",
        "openai",
        "--omk-judge-model",
        "gpt-4o",
        "--omk-record-mode",
        "off",
        "-v",
    )
    result.stdout.fnmatch_lines(["*SUBPASSED*rubric: correct*"])
    result.assert_outcomes(passed=1)
