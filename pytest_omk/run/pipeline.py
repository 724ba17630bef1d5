"""Run one sample through the model-facing stages: resolve → execute → judge.

Plain Python with its collaborators passed in (no pytest import), so it can be unit-tested and
run concurrently for many samples. Deterministic grading happens later, in the item, because it
is cheap and its results are reported as subtests in pytest's order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from pytest_omk.errors import JudgeError
from pytest_omk.execute.base import Executor
from pytest_omk.execute.calls import ModelCalls
from pytest_omk.execute.prompt import build_user_prompt
from pytest_omk.grade.sequential import StopRule
from pytest_omk.models.accounting import CallLog
from pytest_omk.models.run import (
    ExecutionRequest,
    Judge,
    JudgeOutcome,
    ResolvedText,
    Resolver,
    SamplePlan,
    SampleRun,
)


class LiteralResolver:
    """Leaves text unchanged (used when no URL needs resolving)."""

    async def resolve(self, plan: SamplePlan) -> ResolvedText:
        """The sample's text as written."""
        return ResolvedText(plan.sample.prompt, plan.sample.context)


def build_request(plan: SamplePlan, resolved: ResolvedText) -> ExecutionRequest:
    """The executor request for ``plan`` with its resolved text."""
    sample = plan.sample
    mocks = [m.model_dump(by_alias=True, exclude_none=True) for m in sample.mocks] if sample.mocks else None
    return ExecutionRequest(
        prompt=build_user_prompt(resolved.prompt, resolved.context, sample.environment),
        system=plan.system,
        model=plan.model,
        sample_id=sample.sample_id,
        cwd=plan.cwd,
        cwd_key=plan.cwd_key,
        mocks=mocks,
        mocks_strict=sample.mocks_strict,
        allowed_tools=list(sample.allowedTools) if sample.allowedTools is not None else None,
        repeat=plan.repeat,
        take=plan.take,
        source=plan.source,
        sample=sample,
        mock_base_dir=plan.base_dir,
        max_tokens=plan.max_tokens,
    )


@dataclass(frozen=True)
class Stages:
    """The collaborators of :func:`run_sample`."""

    calls: ModelCalls
    executor: Executor
    resolver: Resolver = field(default_factory=LiteralResolver)
    judge: Judge | None = None


class JudgeFailed(JudgeError):
    """The judge's call failed after the model under test answered: the sample is an ERROR, and
    ``run`` holds the answer with every judged check missing, for the report."""

    def __init__(self, message: str, run: SampleRun) -> None:
        super().__init__(message)
        self.run = run


async def run_sample(plan: SamplePlan, stages: Stages, log: CallLog | None = None) -> SampleRun:
    """Resolve, execute and judge one sample; infrastructure failures raise (item ERROR).

    ``log``: where the sample's model calls are noted (the model under test's and the judge's).
    """
    resolved = await stages.resolver.resolve(plan)
    request = build_request(plan, resolved)
    execution = await stages.calls.call(stages.executor, request, log=log)
    judge = JudgeOutcome()
    if stages.judge is not None:
        try:
            judge = await stages.judge.judge(plan, resolved, execution, log)
        except JudgeError as exc:
            unscored = stages.judge.unscored(plan, str(exc))
            raise JudgeFailed(str(exc), SampleRun(execution, unscored, resolved, request)) from exc
    return SampleRun(execution, judge, resolved, request)


async def run_repeated(
    plan: SamplePlan, stages: Stages, times: int, log: CallLog | None = None
) -> list[SampleRun]:
    """``times`` independent runs of ``plan`` (repeat index 0..times-1), all started at once.

    Each run is its own model call (the repeat index is part of the recording key); the shared
    concurrency limit decides how many are in flight. Any run's infrastructure failure raises.
    Every run's calls are noted in the one ``log``.
    """
    if times == 1:
        return [await run_sample(plan, stages, log)]
    runs = (run_sample(replace(plan, repeat=i), stages, log) for i in range(times))
    return list(await asyncio.gather(*runs))


async def run_auto(
    plan: SamplePlan,
    stages: Stages,
    rule: StopRule,
    passed: Callable[[SampleRun], bool],
    log: CallLog | None = None,
) -> list[SampleRun]:
    """``--omk-repeat auto``: runs with repeat index 0, 1, ... until ``rule`` decides.

    Runs start in waves (:meth:`StopRule.next_wave`), so exactly the calls a one-by-one schedule
    would make are made. ``passed`` grades a run; it runs on a worker thread, since a custom check
    may take seconds (the V8 engine is locked per evaluation). Any run's infrastructure failure
    raises.
    """
    runs: list[SampleRun] = []
    good = 0
    while True:
        start = len(runs)
        wave = rule.next_wave(good, start)
        made = await asyncio.gather(
            *(run_sample(replace(plan, repeat=start + i), stages, log) for i in range(wave))
        )
        for run in made:
            runs.append(run)
            good += await asyncio.to_thread(passed, run)
            if rule.decide(good, len(runs)) is not None:
                return runs
