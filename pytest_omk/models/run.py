"""The run's data: what one sample's run is asked, plans, and what the model-facing stages return.

Below every stage (resolve, execute, judge, grade) and above none: the stages exchange these values,
and the orchestrator (:mod:`pytest_omk.run.pipeline`) wires them together.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Protocol

from pytest_omk.models.accounting import CallLog
from pytest_omk.models.results import ExecutionResult, Reading, ResponseFormatRefusal
from pytest_omk.models.sample import Sample

Purpose = Literal["execute", "judge"]


@dataclass(frozen=True)
class ExecutionRequest:
    """What the model under test (or the judge) is asked."""

    prompt: str
    """The full user prompt (environment block, prompt, fenced context, URLs inlined)."""
    system: str | None = None
    model: str | None = None
    sample_id: str = ""
    cwd: Path | None = None
    """Absolute working directory for command executors and agents."""
    cwd_key: str = ""
    """``cwd`` relative to the sample file's directory, in POSIX form: the part of it that identifies
    the call."""
    mocks: list[dict[str, Any]] | None = None
    """The sample's mocks as written in the file (aliases such as ``return`` kept)."""
    mocks_strict: bool = True
    allowed_tools: list[str] | None = None
    repeat: int = 0
    """Repeat index (``--omk-repeat``); part of the recording key."""
    purpose: Purpose = "execute"
    json_mode: bool = False
    """Ask the provider for a JSON object (judge calls)."""
    json_schema: Mapping[str, Any] | None = None
    """Ask the provider for JSON matching this schema instead (judge calls under
    ``--omk-judge-response-format json_schema``)."""
    max_tokens: int | None = None
    """Most tokens the answer may have (``--omk-max-tokens``); ``None``: the server's default."""
    template: str | None = None
    """Judge template id and hash; part of the recording key."""
    sample: Sample | None = field(default=None, compare=False)
    """The sample itself, for Python callables (not part of the recording key)."""
    mock_base_dir: Path | None = field(default=None, compare=False)
    """Where a mock's relative ``return_file`` is found: the sample file's directory (not part of
    the recording key)."""
    source: Path | None = field(default=None, compare=False)
    """The sample file the call is made for: stored in its recording, never part of the key
    (``--omk-record-mode=once`` asks whether that file has recordings)."""
    take: int = 0
    """Attempt of the same item (a rerun by pytest-rerunfailures is take 1, 2 ...); part of the key."""
    model_env: Mapping[str, str] | None = field(default=None, compare=False)
    """Where an app under test reaches its models for this call (``OPENAI_BASE_URL``,
    ``ANTHROPIC_BASE_URL`` of the model gateway, naming this sample): a ``command:`` script gets
    them as its environment, a Python app may build its client from them. Not part of the key."""
    calls: CallLog | None = field(default=None, compare=False)
    """Where an app under test's model calls for this request are noted (the gateway notes each
    in the sample's log). Not part of the key."""

    def identity(self) -> dict[str, Any]:
        """The JSON-able fields that change the answer: the recording key is a hash of these."""
        return {
            "purpose": self.purpose,
            "model": self.model,
            "system": self.system,
            "prompt": self.prompt,
            "cwd": self.cwd_key,
            "mocks": self.mocks,
            "mocksStrict": self.mocks_strict if self.mocks else None,
            "allowedTools": sorted(self.allowed_tools) if self.allowed_tools is not None else None,
            "repeat": self.repeat,
            "take": self.take,
            "jsonMode": self.json_mode,
            "template": self.template,
            # Only when set, so that the keys of calls made without them stay what they were.
            **({"jsonSchema": self.json_schema} if self.json_schema is not None else {}),
            **({"maxTokens": self.max_tokens} if self.max_tokens is not None else {}),
        }


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
    resolved_base: Path | None = None
    """``base_dir`` with its links resolved, when the planner already knows it (once per file)."""
    max_tokens: int | None = None
    """``--omk-max-tokens``: the most tokens of the answer (``None``: the server's default)."""

    # Cached: a plan is frozen, and resolving paths on every call of a large replay is measurable.
    @cached_property
    def cwd(self) -> Path:
        """The sample's working directory: ``cwd`` relative to ``base_dir``, else ``base_dir``."""
        return (self._real_base / self.sample.cwd).resolve() if self.sample.cwd else self._real_base

    @cached_property
    def cwd_key(self) -> str:
        """``cwd`` relative to the sample file's directory: recordings replay from any checkout
        location and whatever pytest's rootdir is (``--rootdir``, recordings outside the project)."""
        if not self.sample.cwd:
            return "."
        return Path(os.path.relpath(self.cwd, self._real_base)).as_posix()

    @cached_property
    def _real_base(self) -> Path:
        return self.resolved_base or self.base_dir.resolve()


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
    refused_formats: Mapping[str, ResponseFormatRefusal] = field(default_factory=dict)
    """The structured output each judge endpoint refused (it judged without it), by endpoint."""
    same_model: str | None = None
    """``"<model> at <server>"`` when the judge is the model under test (same server, same model)."""
    probe: Mapping[str, float] = field(default_factory=dict)
    """``--omk-judge-probe length``: per rubric dimension, the padded output's score minus the output's."""


@dataclass(frozen=True)
class SampleRun:
    """What the model-facing stages produced for one sample."""

    execution: ExecutionResult
    judge: JudgeOutcome
    resolved: ResolvedText
    request: ExecutionRequest


class Resolver(Protocol):
    """Inlines URL contents into prompt and context (fails closed)."""

    async def resolve(self, plan: SamplePlan) -> ResolvedText:
        """The sample's prompt and context with their URLs' contents inlined."""
        ...


class Judge(Protocol):
    """Scores rubric dimensions and judge-scored assertions."""

    async def judge(
        self, plan: SamplePlan, resolved: ResolvedText, execution: ExecutionResult, log: CallLog | None = None
    ) -> JudgeOutcome:
        """The judge's readings of the rubric and the LLM-scored assertions (its calls noted in ``log``)."""
        ...

    def unscored(self, plan: SamplePlan, why: str) -> JudgeOutcome:
        """Every check :meth:`judge` would score, as missing evidence saying ``why`` (its call failed)."""
        ...
