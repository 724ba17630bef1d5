"""Run one sample through the model-facing stages: resolve → execute → judge.

Plain Python with its collaborators passed in (no pytest import), so it can be unit-tested and
run concurrently for many samples. Deterministic grading happens later, in the item, because it
is cheap and its results are reported as subtests in pytest's order.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Protocol

from pytest_omk.execute.base import ExecutionRequest, Executor
from pytest_omk.execute.prompt import build_user_prompt
from pytest_omk.models import Sample
from pytest_omk.models.results import ExecutionResult, Reading
from pytest_omk.runtime import ModelCalls


@dataclass(frozen=True)
class SamplePlan:
    """Everything needed to run one sample, fixed at collection time."""

    sample: Sample
    base_dir: Path
    """The sample file's directory (split directories: the directory)."""
    rootdir: Path
    system: str | None
    model: str | None
    repeat: int = 0
    """Repeat index (``--omk-repeat``): part of the recording key, so each run is its own call."""
    variant: str | None = None
    """The variant's name (``--omk-variant``); its file's text is ``system``."""
    source: Path | None = None
    """The sample file (stored in recordings, not part of their key)."""
    take: int = 0
    """Attempt of the item: a rerun (pytest-rerunfailures) asks the model again, as take 1, 2 ..."""

    # Cached: a plan is frozen, and resolving paths on every call of a large replay is measurable.
    @cached_property
    def cwd(self) -> Path:
        """The sample's working directory: ``cwd`` relative to ``base_dir``, else ``base_dir``."""
        return (self.base_dir / self.sample.cwd).resolve() if self.sample.cwd else self.base_dir.resolve()

    @cached_property
    def cwd_key(self) -> str:
        """``cwd`` relative to the sample file's directory: recordings replay from any checkout
        location and whatever pytest's rootdir is (``--rootdir``, recordings outside the project)."""
        return Path(os.path.relpath(self.cwd, self.base_dir.resolve())).as_posix()


@dataclass(frozen=True)
class ResolvedText:
    """The sample's prompt and context after URL resolution."""

    prompt: str
    context: str | None
    urls: list[dict[str, str | int]] = field(default_factory=list)
    """Resolved URLs with their content digest, for the report."""


@dataclass(frozen=True)
class JudgeOutcome:
    """Judge readings of one sample."""

    assertions: Mapping[int, Reading] = field(default_factory=dict)
    """Readings of judge-scored assertions by top-level index."""
    rubric: Mapping[str, Reading] = field(default_factory=dict)
    """Readings of rubric dimensions by name (``score`` holds the 1-5 score)."""
    calls: int = 0
    replayed: int = 0


@dataclass(frozen=True)
class SampleRun:
    """What the model-facing stages produced for one sample."""

    execution: ExecutionResult
    judge: JudgeOutcome
    resolved: ResolvedText
    request: ExecutionRequest


class Resolver(Protocol):
    """Inlines URL contents into prompt and context (fails closed)."""

    async def resolve(self, plan: SamplePlan) -> ResolvedText: ...


class Judge(Protocol):
    """Scores rubric dimensions and judge-scored assertions."""

    async def judge(self, plan: SamplePlan, resolved: ResolvedText, execution: ExecutionResult) -> JudgeOutcome: ...


class LiteralResolver:
    """Leaves text unchanged (used when no URL needs resolving)."""

    async def resolve(self, plan: SamplePlan) -> ResolvedText:
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
    )


@dataclass(frozen=True)
class Stages:
    """The collaborators of :func:`run_sample`."""

    calls: ModelCalls
    executor: Executor
    resolver: Resolver = field(default_factory=LiteralResolver)
    judge: Judge | None = None


async def run_sample(plan: SamplePlan, stages: Stages) -> SampleRun:
    """Resolve, execute and judge one sample; infrastructure failures raise (item ERROR)."""
    resolved = await stages.resolver.resolve(plan)
    request = build_request(plan, resolved)
    execution = await stages.calls.call(stages.executor, request)
    judge = JudgeOutcome()
    if stages.judge is not None:
        judge = await stages.judge.judge(plan, resolved, execution)
    return SampleRun(execution, judge, resolved, request)


async def run_repeated(plan: SamplePlan, stages: Stages, times: int) -> list[SampleRun]:
    """``times`` independent runs of ``plan`` (repeat index 0..times-1), all started at once.

    Each run is its own model call (the repeat index is part of the recording key); the shared
    concurrency limit decides how many are in flight. Any run's infrastructure failure raises.
    """
    if times == 1:
        return [await run_sample(plan, stages)]
    return list(await asyncio.gather(*(run_sample(replace(plan, repeat=i), stages) for i in range(times))))

