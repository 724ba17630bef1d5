"""LLMJudge driven through the real call path (ModelCalls) with an in-process scripted executor."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pytest_omk.errors import ExecutionError, JudgeError
from pytest_omk.execute.base import ExecutorDefaults, TransientError
from pytest_omk.execute.calls import ModelCalls
from pytest_omk.execute.retry import AdaptiveLimiter, RetryPolicy
from pytest_omk.js.numbers import sample_sd
from pytest_omk.judge.judge import LLMJudge, LLMJudgeOutcome
from pytest_omk.judge.select import describe_selection, same_model_warning, select_judge
from pytest_omk.judge.templates import TEMPLATES
from pytest_omk.models import Sample
from pytest_omk.models.results import ExecutionResult, Reading, ToolCall
from pytest_omk.models.run import ExecutionRequest, JudgeOutcome, ResolvedText, SamplePlan
from pytest_omk.recordings.store import RecordingStore
from pytest_omk.run.pipeline import Stages, run_sample

Script = str | Exception | Sequence[str | Exception]


def verdict(score: Any, reason: str = "because", *, reasoning: bool = True) -> str:
    body: dict[str, Any] = {"reasoning": "step by step"} if reasoning else {}
    return json.dumps({**body, "score": score, "reason": reason})


class ScriptedJudge(ExecutorDefaults):
    """An executor answering by the first script key found in the prompt.

    A list answers replicate ``request.repeat`` with its item (the last one repeats). Every request
    is kept, and the number of calls in flight at once is measured.
    """

    id = "scripted-judge"
    supports_mocks = False

    def __init__(
        self, script: Mapping[str, Script], *, default: str = verdict(3), latency: float = 0.0
    ) -> None:
        self.script = script
        self.default = default
        self.latency = latency
        self.requests: list[ExecutionRequest] = []
        self.in_flight = 0
        self.peak = 0

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        self.requests.append(request)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.latency)
        finally:
            self.in_flight -= 1
        reply: Script = self.default
        for needle, scripted in self.script.items():
            if needle in request.prompt:
                reply = scripted
                break
        if not isinstance(reply, str | Exception):
            reply = reply[min(request.repeat, len(reply) - 1)]
        if isinstance(reply, Exception):
            raise reply
        return ExecutionResult(output=reply, inputTokens=10, outputTokens=5)

    async def aclose(self) -> None:
        pass


def model_calls(tmp_path: Path | None = None, mode: str = "off") -> ModelCalls:
    store = RecordingStore(tmp_path, mode)  # type: ignore[arg-type]
    return ModelCalls(store=store, limiter=AdaptiveLimiter(8), policy=RetryPolicy(retries=0), timeout=5)


def make_plan(tmp_path: Path, **fields: Any) -> SamplePlan:
    sample = Sample.model_validate({"sample_id": "s1", "prompt": "Name the capital of France.", **fields})
    return SamplePlan(sample=sample, base_dir=tmp_path, rootdir=tmp_path, system=None, model="under-test")


def rubric(*criteria: str) -> dict[str, dict[str, Any]]:
    weight = 1 / len(criteria)
    return {f"dim{i}": {"criterion": c, "weight": weight} for i, c in enumerate(criteria)}


def run(
    judge: LLMJudge, plan: SamplePlan, output: str = "Paris", *, execution: ExecutionResult | None = None
) -> JudgeOutcome:
    resolved = ResolvedText(plan.sample.prompt, plan.sample.context)
    return asyncio.run(judge.judge(plan, resolved, execution or ExecutionResult(output=output)))


class TestRubric:
    def test_scores_and_threshold(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({"Correct": verdict(5, "names Paris"), "Brief": verdict(2, "rambles")})
        judge = LLMJudge(model_calls(), fake, model="judge-m", threshold=3)
        outcome = run(judge, make_plan(tmp_path, rubric=rubric("Correct city", "Brief answer")))
        assert outcome.rubric == {
            "dim0": Reading.passed("names Paris", score=5.0),
            "dim1": Reading.failed("rambles", score=2.0),
        }
        assert outcome.assertions == {}
        assert (outcome.calls, outcome.replayed) == (2, 0)

    def test_threshold_is_inclusive(self, tmp_path: Path) -> None:
        judge = LLMJudge(model_calls(), ScriptedJudge({}, default=verdict(4)), model=None, threshold=4)
        assert run(judge, make_plan(tmp_path, rubric=rubric("x"))).rubric["dim0"].status == "pass"

    @pytest.mark.parametrize(
        ("reply", "defect"),
        [
            ("I think it deserves a 4.", "judge reply is not JSON"),
            ("```json\n" + verdict(4) + "\n```", "fenced or wrapped JSON is not accepted"),
            (verdict("4"), 'score "4" is not an integer 1-5'),
            (verdict(4.5), "score 4.5 is not an integer 1-5"),
            (verdict(0), "score 0 is outside the range 1-5"),
            (verdict(4, "  "), "reason is missing or blank"),
        ],
    )
    def test_invalid_reply_is_missing(self, tmp_path: Path, reply: str, defect: str) -> None:
        fake = ScriptedJudge({"Broken": reply}, default=verdict(5))
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3, failure="skip")
        outcome = run(judge, make_plan(tmp_path, rubric=rubric("Fine", "Broken")))
        assert outcome.rubric["dim0"].status == "pass"
        missing = outcome.rubric["dim1"]
        assert missing.status == "missing" and missing.score is None
        assert defect in missing.message

    def test_requests(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({})
        judge = LLMJudge(model_calls(), fake, model="judge-m", threshold=3)
        run(judge, make_plan(tmp_path, rubric=rubric("Accurate"), cwd="."))
        (request,) = fake.requests
        assert request.purpose == "judge" and request.json_mode
        assert request.template == TEMPLATES["rubric"].template_id()
        assert request.model == "judge-m" and request.system == TEMPLATES["rubric"].system
        assert (request.sample_id, request.cwd_key, request.repeat) == ("s1", ".", 0)
        assert request.mocks is None and request.allowed_tools is None

    def test_trace_summary_only_for_traced_executions(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({})
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3)
        plan = make_plan(
            tmp_path, rubric=rubric("Uses tools well"), assertions=[{"type": "answer_relevancy"}]
        )
        run(
            judge,
            plan,
            execution=ExecutionResult(output="ok", toolCalls=[ToolCall(tool="Read", input="a.txt")]),
        )
        run(judge, plan, execution=ExecutionResult(output="ok"))
        traced, relevancy, untraced, _ = sorted(fake.requests, key=lambda r: "Uses tools" not in r.prompt)
        assert "Read → a.txt" in traced.prompt and "<omk:trace>" in traced.prompt
        assert "<omk:trace>" not in untraced.prompt
        assert "<omk:trace>" not in relevancy.prompt


class TestRepeat:
    def test_mean_and_sd(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({"Clear": [verdict(4, "clear"), verdict(4, "ok"), verdict(5, "very clear")]})
        judge = LLMJudge(model_calls(), fake, model=None, threshold=4.5, repeat=3)
        outcome = run(judge, make_plan(tmp_path, rubric=rubric("Clear")))
        assert isinstance(outcome, LLMJudgeOutcome)
        reading = outcome.rubric["dim0"]
        assert reading.score == 4.33 and reading.status == "fail"
        assert reading.message == "clear (mean of 3/3 judge readings: 4, 4, 5; SD 0.577)"
        assert outcome.sd == {"dim0": 0.577}
        assert [r.score for r in outcome.replicates["dim0"]] == [4, 4, 5]
        assert sorted(r.repeat for r in fake.requests) == [0, 1, 2]
        assert outcome.calls == 3

    def test_invalid_replicates_are_left_out(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({"Clear": [verdict(2), "garbage", verdict(3)]})
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3, repeat=3)
        outcome = run(judge, make_plan(tmp_path, rubric=rubric("Clear")))
        assert isinstance(outcome, LLMJudgeOutcome)
        assert outcome.rubric["dim0"].score == 2.5 and outcome.rubric["dim0"].status == "fail"
        assert "2/3 judge readings" in outcome.rubric["dim0"].message
        assert [r.status for r in outcome.replicates["dim0"]] == ["fail", "missing", "pass"]

    def test_no_valid_replicate_is_missing(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({"Clear": ["nope", verdict(9)]})
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3, repeat=2, failure="skip")
        reading = run(judge, make_plan(tmp_path, rubric=rubric("Clear"))).rubric["dim0"]
        assert reading.status == "missing"
        # Asked once more under skip too (docs/judge.md), then each unusable reply quoted.
        assert len(fake.requests) == 3
        assert reading.message.startswith(
            "no usable judge reply in 2 readings: judge reply: score 9 is outside"
        )
        assert '(the reply: \'{"reasoning": ' in reading.message

    def test_an_unusable_dimension_is_re_asked_once_then_errors(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({"Clear": ["nope", "still nope"]}, default=verdict(5))
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3)
        with pytest.raises(
            JudgeError, match="could not score rubric dimension 'dim1': judge reply is not JSON"
        ):
            run(judge, make_plan(tmp_path, rubric=rubric("Fine", "Clear")))
        # Two planned calls, one re-ask of the broken dimension (as another replicate).
        assert [r.repeat for r in fake.requests] == [0, 0, 1]

    def test_a_re_asked_dimension_that_answers_is_scored(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({"Clear": ["nope", verdict(4, "better")]})
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3)
        reading = run(judge, make_plan(tmp_path, rubric=rubric("Clear"))).rubric["dim0"]
        assert reading == Reading.passed("better", score=4.0)

    def test_single_reading_has_no_sd(self, tmp_path: Path) -> None:
        outcome = run(
            LLMJudge(model_calls(), ScriptedJudge({}), model=None, threshold=3),
            make_plan(tmp_path, rubric=rubric("x")),
        )
        assert isinstance(outcome, LLMJudgeOutcome) and outcome.sd == {}

    def test_sample_sd(self) -> None:
        assert sample_sd([4]) is None
        assert sample_sd([4, 4]) == 0.0
        assert sample_sd([1, 5]) == 2.828
        assert sample_sd([3, 4, 5, 5]) == 0.957

    def test_repeat_must_be_positive(self) -> None:
        with pytest.raises(ValueError):
            LLMJudge(model_calls(), ScriptedJudge({}), model=None, threshold=3, repeat=0)


class TestAssertions:
    ASSERTIONS: ClassVar[list[dict[str, Any]]] = [
        {"type": "contains", "value": "Paris"},
        {"type": "semantic_similarity", "reference": "REF-SIM", "threshold": 4},
        {"type": "faithfulness"},
        {"type": "answer_relevancy", "not": True},
        {"type": "context_recall", "reference": "REF-RECALL"},
    ]

    def test_readings_by_index(self, tmp_path: Path) -> None:
        fake = ScriptedJudge(
            {
                "REF-SIM": verdict(3, "close", reasoning=False),
                "CTX": 'Sure: {"score": 5, "reason": "grounded"}',
                "User question": verdict(5, "on topic", reasoning=False),
                "REF-RECALL": "no idea",
            }
        )
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3, failure="skip")
        outcome = run(judge, make_plan(tmp_path, context="CTX", assertions=self.ASSERTIONS))
        assert list(outcome.assertions) == [1, 2, 3, 4]
        assert outcome.assertions[1] == Reading.failed("judge score 3 (threshold 4): close", score=3)
        assert outcome.assertions[2] == Reading.passed("judge score 5 (threshold 3): grounded", score=5)
        # `not` is the grader's business: the judge reports the raw reading.
        assert outcome.assertions[3].status == "pass"
        assert outcome.assertions[4] == Reading.missing(
            "context_recall: judge reply is not JSON (the reply: 'no idea')", "judge-reply"
        )
        assert outcome.calls == 5  # the unusable reply was asked for once more

    def test_inputs(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({})
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3)
        plan = make_plan(
            tmp_path,
            context="CTX",
            assertions=[*self.ASSERTIONS, {"type": "faithfulness", "reference": "OWN-REF"}],
        )
        resolved = ResolvedText("RESOLVED PROMPT", "RESOLVED CTX")
        asyncio.run(judge.judge(plan, resolved, ExecutionResult(output="OUT")))
        by_template = {
            (r.template or "").split("/")[0] + ("+ref" if "OWN-REF" in r.prompt else ""): r
            for r in fake.requests
        }
        assert set(by_template) == {
            "omk-semantic-similarity", "omk-faithfulness", "omk-faithfulness+ref", "omk-answer-relevancy", "omk-context-recall",
        }  # fmt: skip
        assert "REF-SIM" in by_template["omk-semantic-similarity"].prompt
        assert "<omk:reference>\nRESOLVED CTX\n</omk:reference>" in by_template["omk-faithfulness"].prompt
        assert "RESOLVED CTX" not in by_template["omk-faithfulness+ref"].prompt
        assert "<omk:task>\nRESOLVED PROMPT\n</omk:task>" in by_template["omk-answer-relevancy"].prompt
        assert "RESOLVED CTX" not in by_template["omk-answer-relevancy"].prompt
        assert "REF-RECALL" in by_template["omk-context-recall"].prompt
        for request in fake.requests:
            assert "<omk:output>\nOUT\n</omk:output>" in request.prompt
            template = request.template or ""
            assert template == TEMPLATES[template.split("/")[0][4:].replace("-", "_")].template_id()


class TestConcurrency:
    def test_all_calls_run_at_once(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({}, latency=0.3)
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3)
        criteria = [f"criterion {i}" for i in range(6)]
        plan = make_plan(tmp_path, rubric=rubric(*criteria), assertions=[{"type": "answer_relevancy"}])
        outcome = run(judge, plan)
        # The peak count of calls in flight proves they overlapped; no wall-clock bound needed.
        assert outcome.calls == 7 and fake.peak == 7


class TestFailures:
    def test_provider_failure_is_a_judge_error(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({"Accurate": ExecutionError("HTTP 400: model not found")})
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3)
        with pytest.raises(JudgeError, match=r"rubric dimension 'dim1' failed: HTTP 400: model not found$"):
            run(judge, make_plan(tmp_path, rubric=rubric("Fine", "Accurate")))
        assert len(fake.requests) == 2

    def test_transient_failure_after_retries(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({"User question": TransientError("HTTP 503")})
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3)
        plan = make_plan(tmp_path, rubric=rubric("Fine"), assertions=[{"type": "answer_relevancy"}])
        with pytest.raises(
            JudgeError, match=r"assertion 0 \(answer_relevancy\) failed: HTTP 503 \(after 0 retries\)"
        ):
            run(judge, plan)

    def test_several_failures_are_counted(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({}, default=ExecutionError("down"))  # type: ignore[arg-type]
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3)
        with pytest.raises(JudgeError, match=r"\(2 other judge calls failed too\)"):
            run(judge, make_plan(tmp_path, rubric=rubric("a", "b", "c")))

    def test_programming_errors_are_not_disguised(self, tmp_path: Path) -> None:
        fake = ScriptedJudge({"a": KeyError("bug")})
        judge = LLMJudge(model_calls(), fake, model=None, threshold=3)
        with pytest.raises(KeyError):
            run(judge, make_plan(tmp_path, rubric=rubric("a")))


def test_nothing_to_judge_makes_no_call(tmp_path: Path) -> None:
    fake = ScriptedJudge({})
    outcome = run(
        LLMJudge(model_calls(), fake, model=None, threshold=3),
        make_plan(tmp_path, assertions=[{"type": "contains", "value": "x"}]),
    )
    assert outcome == LLMJudgeOutcome() and fake.requests == []


def test_recorded_judge_calls_replay(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, rubric=rubric("Correct"), assertions=[{"type": "answer_relevancy"}])
    first = ScriptedJudge({"Correct": verdict(4, "good")})
    live = run(LLMJudge(model_calls(tmp_path / "rec", "new_episodes"), first, model="j", threshold=3), plan)
    assert (live.calls, live.replayed) == (2, 0)
    second = ScriptedJudge({}, default="should not be asked")
    replayed = run(LLMJudge(model_calls(tmp_path / "rec", "none"), second, model="j", threshold=3), plan)
    assert (replayed.calls, replayed.replayed) == (2, 2) and second.requests == []
    assert replayed.rubric == live.rubric and replayed.assertions == live.assertions
    # Another judge model is another call: replay-only mode cannot answer it.
    with pytest.raises(JudgeError, match="failed"):
        run(LLMJudge(model_calls(tmp_path / "rec", "none"), second, model="other", threshold=3), plan)


def _two_recorded_and_one_new(tmp_path: Path) -> tuple[Path, SamplePlan, ScriptedJudge]:
    """Recordings of two judged dimensions, and a plan with the same two and a new one after them
    (the same two replay: a judge never sees weights); the fake answers only the new one."""
    recordings = tmp_path / "rec"
    recorded = make_plan(tmp_path, rubric=rubric("Correct", "Brief"))
    run(
        LLMJudge(model_calls(recordings, "new_episodes"), ScriptedJudge({}), model="j", threshold=3), recorded
    )
    weighted = {name: {**dimension, "weight": 0.25} for name, dimension in rubric("Correct", "Brief").items()}
    plan = make_plan(tmp_path, rubric={**weighted, "dim9": {"criterion": "New", "weight": 0.5}})
    return recordings, plan, ScriptedJudge({"New": verdict(5, "new")})


def test_recorded_answers_are_read_without_a_task_each(tmp_path: Path) -> None:
    """A replay answers judge calls from files: only the calls left to make become tasks."""
    recordings, plan, fake = _two_recorded_and_one_new(tmp_path)
    tasks: list[str] = []

    async def judged() -> JudgeOutcome:
        loop = asyncio.get_running_loop()

        def counted(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
            tasks.append(coro.__qualname__)
            return asyncio.Task(coro, loop=loop, **kwargs)

        judge = LLMJudge(model_calls(recordings, "new_episodes"), fake, model="j", threshold=3)
        loop.set_task_factory(counted)
        try:
            return await judge.judge(
                plan, ResolvedText(plan.sample.prompt, None), ExecutionResult(output="Paris")
            )
        finally:
            loop.set_task_factory(None)

    outcome = asyncio.run(judged())
    # One task for the one call made (its executor's timeout runs it in another); none per recording.
    assert [name for name in tasks if name != "ScriptedJudge.execute"] == ["ModelCalls.call"]
    assert ["New" in request.prompt for request in fake.requests] == [True]
    assert (outcome.calls, outcome.replayed) == (3, 2)
    assert [(name, reading.score) for name, reading in outcome.rubric.items()] == [
        ("dim0", 3.0),
        ("dim1", 3.0),
        ("dim9", 5.0),
    ]


def test_a_judge_call_without_a_recording_is_looked_up_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge asks for recorded answers first; the calls it then makes are not looked up again."""
    recordings, plan, fake = _two_recorded_and_one_new(tmp_path)
    calls = model_calls(recordings, "new_episodes")
    looked_up: list[str] = []
    lookup = calls.store._lookup

    def counted(kind: str, identity: Any, label: str) -> Any:
        looked_up.append(kind)
        return lookup(kind, identity, label)

    monkeypatch.setattr(calls.store, "_lookup", counted)
    outcome = run(LLMJudge(calls, fake, model="j", threshold=3), plan)
    assert (outcome.calls, outcome.replayed, len(fake.requests)) == (3, 2, 1)
    assert len(looked_up) == 3  # two recorded answers and one miss, each read once


def test_runs_as_a_pipeline_stage(tmp_path: Path) -> None:
    class Model(ScriptedJudge):
        id = "model-under-test"

    calls = model_calls()
    judge = LLMJudge(calls, ScriptedJudge({}, default=verdict(5)), model=None, threshold=3)
    stages = Stages(calls=calls, executor=Model({}, default="Paris"), judge=judge)
    result = asyncio.run(run_sample(make_plan(tmp_path, rubric=rubric("Names Paris")), stages))
    assert result.execution.output == "Paris"
    assert result.judge.rubric["dim0"].score == 5


class TestSelection:
    @pytest.mark.parametrize(
        ("spec", "chosen"),
        [
            ("anthropic", "anthropic"),
            ("  python:judges:grade  ", "python:judges:grade"),
            ("none", None),
            ("OFF", None),
            ("", None),
            (None, None),
        ],
    )
    def test_select_judge(self, spec: str | None, chosen: str | None) -> None:
        assert select_judge(spec) == chosen

    def test_provider_variables_choose_no_judge(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
            monkeypatch.setenv(name, "set-by-the-app-under-test")
        assert select_judge(None) is None

    def test_describe_selection(self) -> None:
        assert describe_selection("echo") == "judge: echo (--omk-judge)"
        assert describe_selection("none") == "judge: off (--omk-judge none)"
        assert describe_selection(None).startswith("judge: none")

    @pytest.mark.parametrize(
        ("judge", "judge_model", "executor", "model", "warns"),
        [
            ("openai", "gpt-x", "openai", "gpt-x", True),
            ("openai", None, "openai", None, True),
            ("command:./run.sh", None, "./run.sh", None, True),
            ("openai", "gpt-x", "openai", "gpt-y", False),
            ("openai", None, "openai", "gpt-x", False),
            ("anthropic", "m", "openai", "m", False),
            (None, None, "openai", None, False),
            ("openai", None, None, None, False),
        ],
    )
    def test_same_model_warning(
        self, judge: str | None, judge_model: str | None, executor: str | None, model: str | None, warns: bool
    ) -> None:
        warning = same_model_warning(judge, judge_model, executor, model)
        assert (warning is not None) == warns
        if warning:
            assert "the judge is the model under test" in warning and "--omk-judge-model" in warning
