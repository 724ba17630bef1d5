"""The LLM judge: scores a sample's rubric dimensions and judge-scored assertions.

One judge call per rubric dimension (times ``repeat``) and one per judge-scored assertion, all
started at once; the shared call path (:class:`~pytest_omk.execute.calls.ModelCalls`) applies the
recordings, the concurrency limit and the retries, so a judge call is recorded and replayed exactly
like an executor call, keyed by its template id as well.

What each call sees is deliberately narrow (semantics §3.4, §10.1): a rubric dimension sees the
URL-resolved prompt (no context, no environment), its one criterion, the output and, for agents, a
trace summary; never the dimension's name or weight, the sample's metadata or its mocks, which
could tell the judge what answer is hoped for.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pytest_omk.errors import ExecutionError, JudgeError
from pytest_omk.execute.base import Executor
from pytest_omk.execute.calls import ModelCalls
from pytest_omk.js.text import js_trim
from pytest_omk.judge.parse import JudgeReply, parse_assertion_reply, parse_rubric_reply, quote_reply
from pytest_omk.judge.provenance import refused_formats, same_model
from pytest_omk.judge.readings import assertion_reading, dimension_reading
from pytest_omk.judge.score_schema import request_format
from pytest_omk.judge.templates import RUBRIC, TEMPLATES, JudgeTemplate
from pytest_omk.judge.trace_summary import prompt_mask, summarize_execution
from pytest_omk.models.accounting import CallLog
from pytest_omk.models.assertions import AnswerRelevancy, ContextRecall, Faithfulness, SemanticSimilarity
from pytest_omk.models.results import ExecutionResult, Reading
from pytest_omk.models.run import ExecutionRequest, JudgeOutcome, ResolvedText, SamplePlan

_Judged = SemanticSimilarity | Faithfulness | AnswerRelevancy | ContextRecall
JUDGED_ASSERTIONS = (SemanticSimilarity, Faithfulness, AnswerRelevancy, ContextRecall)


@dataclass(frozen=True)
class LLMJudgeOutcome(JudgeOutcome):
    """A :class:`JudgeOutcome` with the per-replicate detail of repeated rubric readings."""

    replicates: Mapping[str, tuple[Reading, ...]] = field(default_factory=dict)
    """Every replicate's reading per rubric dimension, in replicate order."""
    sd: Mapping[str, float] = field(default_factory=dict)
    """Sample standard deviation (n-1, 3 decimals) per dimension with two or more valid replicates."""


@dataclass(frozen=True)
class _Job:
    """One judge call to make."""

    key: str | int
    """Rubric dimension name, or top-level assertion index."""
    label: str
    """How errors name it: ``rubric dimension "clarity"``, ``assertion 2 (faithfulness)``."""
    template: JudgeTemplate
    values: Mapping[str, str | None]
    replicate: int = 0
    threshold: float = 0.0
    """Pass mark of a judge-scored assertion (rubric dimensions use the judge's threshold)."""


def _reference_or_context(reference: str | None, context: str | None) -> str | None:
    # The loader guarantees one of them is non-blank; a blank reference falls back to the context.
    if reference is not None and js_trim(reference):
        return reference
    return context if context is not None and js_trim(context) else None


class LLMJudge:
    """Implements the :class:`~pytest_omk.models.run.Judge` protocol with a model behind ``executor``."""

    def __init__(
        self,
        calls: ModelCalls,
        executor: Executor,
        *,
        model: str | None,
        threshold: float,
        repeat: int = 1,
        failure: str = "error",
        response_format: str = "json_object",
        max_tokens: int | None = None,
    ) -> None:
        if repeat < 1:
            raise ValueError(f"repeat must be >= 1, got {repeat}")
        self.calls = calls
        self.executor = executor
        self.model = model
        self.threshold = threshold
        """A rubric dimension passes when its (mean) score is at least this."""
        self.repeat = repeat
        """Judge calls per rubric dimension; their valid scores are averaged."""
        self.failure = failure
        """``error``: a reply still unusable after one re-ask is a :class:`JudgeError` naming what it
        scored (the sample errors, never passes); ``skip``/``missing``: it is missing evidence."""
        self.response_format = response_format
        """What the provider is asked for: ``json_object``, ``json_schema`` or ``none``."""
        self.max_tokens = max_tokens

    # --- planning -------------------------------------------------------------------------------

    def plan_jobs(
        self, plan: SamplePlan, resolved: ResolvedText, execution: ExecutionResult
    ) -> tuple[list[_Job], dict[int, Reading]]:
        """The judge calls for a sample, and readings settled without a call (nothing to judge against)."""
        output = execution.output
        jobs: list[_Job] = []
        trace = summarize_execution(execution, prompt_mask(self.calls))
        for name, dimension in (plan.sample.rubric or {}).items():
            values = {
                "task": resolved.prompt,
                "criterion": dimension.criterion,
                "output": output,
                "trace": trace,
            }
            jobs += [
                _Job(name, f"rubric dimension {name!r}", RUBRIC, values, replicate)
                for replicate in range(self.repeat)
            ]
        settled: dict[int, Reading] = {}
        for index, assertion in enumerate(plan.sample.assertions or []):
            if not isinstance(assertion, JUDGED_ASSERTIONS):
                continue
            against = self._assertion_input(assertion, resolved)
            if against is None:
                settled[index] = Reading.missing(
                    f"{assertion.type}: no reference or context to judge against", "judge-input"
                )
                continue
            key = "task" if isinstance(assertion, AnswerRelevancy) else "reference"
            values = {key: against, "output": output}
            label = f"assertion {index} ({assertion.type})"
            jobs.append(_Job(index, label, TEMPLATES[assertion.type], values, threshold=assertion.threshold))
        return jobs, settled

    def unscored(self, plan: SamplePlan, why: str) -> JudgeOutcome:
        """Every rubric dimension and judge-scored assertion of the sample, missing because ``why``
        (the judge's call failed: the sample is an ERROR, and its report keeps the other checks)."""
        reading = Reading.missing(f"not scored: {why}", "judge-error")
        judged = [i for i, a in enumerate(plan.sample.assertions or []) if isinstance(a, JUDGED_ASSERTIONS)]
        return JudgeOutcome(
            assertions=dict.fromkeys(judged, reading), rubric=dict.fromkeys(plan.sample.rubric or {}, reading)
        )

    @staticmethod
    def _assertion_input(assertion: _Judged, resolved: ResolvedText) -> str | None:
        """What a judge-scored assertion compares the output with (semantics §9.1)."""
        if isinstance(assertion, SemanticSimilarity):
            return assertion.reference
        if isinstance(assertion, AnswerRelevancy):
            return resolved.prompt
        return _reference_or_context(assertion.reference, resolved.context)

    # --- calling --------------------------------------------------------------------------------

    def _request(self, plan: SamplePlan, job: _Job) -> ExecutionRequest:
        json_mode, json_schema = request_format(self.response_format, rubric=isinstance(job.key, str))
        return ExecutionRequest(
            prompt=prompt_mask(self.calls)(job.template.render(job.values)),  # no secret to the judge
            system=job.template.system,
            model=self.model,
            sample_id=plan.sample.sample_id,
            cwd_key=plan.cwd_key,
            repeat=job.replicate,
            take=plan.take,
            source=plan.source,
            purpose="judge",
            json_mode=json_mode,
            json_schema=json_schema,
            max_tokens=self.max_tokens,
            template=job.template.template_id(),
        )

    async def judge(
        self, plan: SamplePlan, resolved: ResolvedText, execution: ExecutionResult, log: CallLog | None = None
    ) -> JudgeOutcome:
        """Score the sample (every call noted in ``log``); a provider failure after retries raises
        :class:`JudgeError`, and so does (``failure=error``) a reply still unusable after a re-ask."""
        jobs, settled = self.plan_jobs(plan, resolved, execution)
        answers = await self._answers(plan, jobs, log)
        replies = [_read(job, answer.output) for job, answer in zip(jobs, answers, strict=True)]
        first = answers
        answers, replies, again = await self._reask(plan, jobs, answers, replies, log)
        asked = [*first, *again]
        rubric_replies: dict[str, list[JudgeReply | str]] = {}
        assertions: dict[int, Reading] = dict(settled)
        for job, reply in zip(jobs, replies, strict=True):
            if isinstance(job.key, str):
                rubric_replies.setdefault(job.key, []).append(reply)
            else:
                assertions[job.key] = assertion_reading(reply, job.threshold, job.template.kind)

        rubric: dict[str, Reading] = {}
        replicates: dict[str, tuple[Reading, ...]] = {}
        spreads: dict[str, float] = {}
        for name, replies in rubric_replies.items():
            rubric[name], replicates[name], sd = dimension_reading(replies, self.threshold)
            if sd is not None:
                spreads[name] = sd
        self._check_judged(jobs, rubric, assertions)
        return LLMJudgeOutcome(
            assertions=dict(sorted(assertions.items())),
            rubric=rubric,
            calls=len(asked),  # the re-asks too: each is a call (and a recording) of its own
            replayed=sum(1 for answer in asked if answer.replayed),
            replicates=replicates,
            sd=spreads,
            refused_formats=refused_formats(asked),
            same_model=same_model(execution, asked),
        )

    async def _answers(
        self, plan: SamplePlan, jobs: Sequence[_Job], log: CallLog | None
    ) -> list[ExecutionResult]:
        """Every job's answer; a provider failure (after retries) is a :class:`JudgeError`."""
        requests = [self._request(plan, job) for job in jobs]
        # Recorded answers are read at once; only the calls left become tasks. (A replay answers
        # every judge call from its recordings, and a task per call cost more than reading it.)
        results: list[ExecutionResult | BaseException | None] = [
            self.calls.recorded(self.executor, request, log=log) for request in requests
        ]
        left = [index for index, result in enumerate(results) if result is None]
        # Let every call finish even if one fails: the answers that did come back are recorded and
        # replay on the next run, so a flaky provider does not cost the whole sample's calls again.
        if left:
            asked = await asyncio.gather(
                *(self.calls.call(self.executor, requests[index], looked_up=True, log=log) for index in left),
                return_exceptions=True,
            )
            for index, outcome in zip(left, asked, strict=True):
                results[index] = outcome
        answers: list[ExecutionResult] = []
        failures: list[tuple[_Job, ExecutionError]] = []
        for job, result in zip(jobs, results, strict=True):
            if isinstance(result, ExecutionError):
                failures.append((job, result))
            elif isinstance(result, BaseException):
                raise result
            else:
                assert result is not None  # every index left was asked
                answers.append(result)
        if failures:
            job, error = failures[0]
            others = f" ({len(failures) - 1} other judge calls failed too)" if len(failures) > 1 else ""
            raise JudgeError(f"the judge call for {job.label} failed: {error}{others}") from error
        return answers

    async def _reask(
        self,
        plan: SamplePlan,
        jobs: Sequence[_Job],
        answers: list[ExecutionResult],
        replies: list[JudgeReply | str],
        log: CallLog | None,
    ) -> tuple[list[ExecutionResult], list[JudgeReply | str], list[ExecutionResult]]:
        """Ask once more where a reply was unusable (whatever ``failure`` says); the new reply counts.

        ``replies`` are ``answers`` read (a defect message for an unusable one); both are returned
        with the new answers in place, and the new answers alone.
        """
        # A dimension with one usable replicate is scored from it; only a key with none is re-asked.
        usable = {job.key for job, reply in zip(jobs, replies, strict=True) if not isinstance(reply, str)}
        hopeless = {job.key for job in jobs} - usable
        redo = [next(i for i, job in enumerate(jobs) if job.key == key) for key in hopeless]
        if not redo:
            return answers, replies, []
        # A replicate number past the planned ones: its own recording, the same prompt.
        again = [dataclasses.replace(jobs[i], replicate=jobs[i].replicate + self.repeat) for i in redo]
        fresh = await self._answers(plan, again, log)
        merged, read = list(answers), list(replies)
        for index, job, answer in zip(redo, again, fresh, strict=True):
            merged[index], read[index] = answer, _read(job, answer.output)
        return merged, read, fresh

    def _check_judged(
        self, jobs: Sequence[_Job], rubric: Mapping[str, Reading], assertions: Mapping[int, Reading]
    ) -> None:
        """Under ``failure=error``, a dimension or judged assertion left unscored errors the sample."""
        if self.failure != "error":
            return
        labels = {job.key: job.label for job in jobs}
        broken = [(labels[k], r) for k, r in rubric.items() if r.status == "missing"]
        broken += [(labels[k], r) for k, r in assertions.items() if k in labels and r.status == "missing"]
        if broken:
            label, reading = broken[0]
            others = f" ({len(broken) - 1} more unscored)" if len(broken) > 1 else ""
            raise JudgeError(
                f"the judge could not score {label}: {reading.message}{others} "
                "(ini omk_judge_failure = skip treats this as missing evidence)"
            )


def _read(job: _Job, output: str) -> JudgeReply | str:
    """A judge reply read as its job's kind (a rubric dimension's or an assertion's), or its defect
    with the reply quoted (what the judge said is what a user needs to see to fix it)."""
    reply = parse_rubric_reply(output) if isinstance(job.key, str) else parse_assertion_reply(output)
    return f"{reply} (the reply: {quote_reply(output)})" if isinstance(reply, str) else reply
