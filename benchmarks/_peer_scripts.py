"""The peers' side of ``benchmarks/peers.py``: one config or script per tool, written as text.

Each runs the workload of :mod:`benchmarks.workload` (the prompts in ``prompts.json``, one chat
completion each against the loopback fake, :data:`~benchmarks.workload.CHECKS` on every answer,
32 calls in flight) the way that tool's documentation sets up an evaluation, and prints the number
of samples that passed both checks, so the runner can refuse a figure of a run that did not work.
"""

from __future__ import annotations

import json
from typing import Any

from benchmarks import workload as w


def promptfoo_config(prompts: list[dict[str, Any]], base_url: str) -> str:
    """``promptfooconfig.json``: one test per prompt, asserting ``contains`` and ``not-contains``."""
    config = {
        "description": "pytest-omk peers benchmark",
        "prompts": ["{{prompt}}"],
        "providers": [{"id": "openai:chat:bench-model", "config": {"apiBaseUrl": base_url}}],
        "tests": [
            {
                "description": row["id"],
                "vars": {"prompt": row["prompt"]},
                "assert": [
                    {"type": "contains", "value": w.MUST_CONTAIN},
                    {"type": "not-contains", "value": w.MUST_NOT_CONTAIN},
                ],
            }
            for row in prompts
        ],
    }
    return json.dumps(config, indent=1)


def promptfoo_passed(results: dict[str, Any]) -> int:
    """Passing tests in promptfoo's ``-o results.json`` output."""
    stats = results.get("results", {}).get("stats", {})
    return int(stats.get("successes", 0))


INSPECT_AI = f'''\
"""inspect_ai: a Task of the prompts, generate(), two scorers (one per check)."""
import json, sys

from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
from inspect_ai.solver import generate


@scorer(metrics=[accuracy()])
def contains():
    async def score(state, target):
        return Score(value=CORRECT if {w.MUST_CONTAIN!r} in state.output.completion else INCORRECT)
    return score


@scorer(metrics=[accuracy()])
def not_contains():
    async def score(state, target):
        return Score(value=INCORRECT if {w.MUST_NOT_CONTAIN!r} in state.output.completion else CORRECT)
    return score


rows = json.load(open(sys.argv[1], encoding="utf-8"))
task = Task(
    dataset=[Sample(input=row["prompt"], id=row["id"]) for row in rows],
    solver=generate(),
    scorer=[contains(), not_contains()],
)
# "openai-api/<service>/<model>" is inspect's OpenAI-compatible provider (chat completions); it
# reads FAKE_BASE_URL and FAKE_API_KEY.
logs = inspect_eval(
    task, model="openai-api/fake/bench-model", max_connections={w.CONCURRENCY},
    log_dir=sys.argv[2], display="none",
)
passed = sum(
    all(score.value == CORRECT for score in (sample.scores or {{}}).values()) and len(sample.scores or {{}}) == 2
    for sample in (logs[0].samples or [])
)
print(json.dumps({{"status": logs[0].status, "passed": passed}}))
'''
"""Run as ``python inspect_task.py prompts.json LOG_DIR``."""


DEEPEVAL = f'''\
"""deepeval: the app's answers (AsyncOpenAI, 32 in flight), then evaluate() with two metrics."""
import asyncio, json, sys

from openai import AsyncOpenAI
from deepeval import evaluate
from deepeval.evaluate.configs import AsyncConfig, DisplayConfig
from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase


class Check(BaseMetric):
    """A deterministic check: ``needle`` must (or must not) be in the answer."""

    def __init__(self, needle, present):
        self.needle, self.present, self.threshold = needle, present, 1.0
        self.async_mode = True

    def measure(self, test_case, *args, **kwargs):
        self.score = 1.0 if (self.needle in test_case.actual_output) == self.present else 0.0
        self.success = self.score >= self.threshold
        return self.score

    async def a_measure(self, test_case, *args, **kwargs):
        return self.measure(test_case)

    def is_successful(self):
        return self.success

    @property
    def __name__(self):
        return ("contains " if self.present else "not contains ") + self.needle


async def answers(rows):
    client = AsyncOpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY point at the fake
    gate = asyncio.Semaphore({w.CONCURRENCY})

    async def one(row):
        async with gate:
            reply = await client.chat.completions.create(
                model="bench-model", messages=[{{"role": "user", "content": row["prompt"]}}]
            )
            return LLMTestCase(input=row["prompt"], actual_output=reply.choices[0].message.content)

    return await asyncio.gather(*(one(row) for row in rows))


rows = json.load(open(sys.argv[1], encoding="utf-8"))
cases = asyncio.run(answers(rows))
result = evaluate(
    cases,
    metrics=[Check({w.MUST_CONTAIN!r}, True), Check({w.MUST_NOT_CONTAIN!r}, False)],
    async_config=AsyncConfig(max_concurrent={w.CONCURRENCY}),
    display_config=DisplayConfig(print_results=False, show_indicator=False),
)
print(json.dumps({{"passed": sum(bool(r.success) for r in result.test_results)}}))
'''
"""Run as ``python deepeval_eval.py prompts.json``."""
