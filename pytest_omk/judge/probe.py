"""The length probe (``--omk-judge-probe length``): does the judge score longer answers higher.

Every judged output is judged once more with neutral filler appended: :data:`FILLER` repeated to
about the output's own length (so the probe doubles it), after a blank line. The filler says
nothing about any question, so a judge that reads the criterion gives the padded answer the same
score or a lower one; a judge that rewards length scores it higher. The shift of each rubric
dimension (padded score minus original) is kept on the outcome (``probe``) and reaches the sample's
record as ``judgeProbe``. The probe's judge calls go through the same call path as every judge
call: recorded (the padded output is part of the key), replayed, budgeted and counted as judge calls.
"""

from __future__ import annotations

from dataclasses import replace

from pytest_omk.models.accounting import CallLog
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import Judge, JudgeOutcome, ResolvedText, SamplePlan

FILLER = (
    "This sentence is neutral filler added by a length probe; it carries no information about the "
    "question or the answer above. "
)
"""The probe's filler (documented in docs/judge.md): the same text for every output."""


def filler(length: int) -> str:
    """Filler of ``length`` characters (at least one sentence), cut at a word boundary."""
    text = FILLER * (length // len(FILLER) + 1)
    cut = text[: max(length, len(FILLER))]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut


class LengthProbe:
    """A :class:`~pytest_omk.models.run.Judge` that judges each output twice: as it is, and padded."""

    def __init__(self, inner: Judge) -> None:
        self.inner = inner

    async def judge(
        self, plan: SamplePlan, resolved: ResolvedText, execution: ExecutionResult, log: CallLog | None = None
    ) -> JudgeOutcome:
        """The inner judge's outcome, with each rubric dimension's shift under the padding."""
        outcome = await self.inner.judge(plan, resolved, execution, log)
        if not outcome.rubric:
            return outcome
        padded = execution.model_copy(
            update={"output": f"{execution.output}\n\n{filler(len(execution.output))}"}
        )
        probed = await self.inner.judge(plan, resolved, padded, log)
        shifts = {
            name: probed.rubric[name].score - reading.score  # type: ignore[operator]
            for name, reading in outcome.rubric.items()
            if reading.score is not None and name in probed.rubric and probed.rubric[name].score is not None
        }
        return replace(
            outcome,
            probe=shifts,
            calls=outcome.calls + probed.calls,
            replayed=outcome.replayed + probed.replayed,
        )

    def unscored(self, plan: SamplePlan, why: str) -> JudgeOutcome:
        """As the inner judge: every check missing."""
        return self.inner.unscored(plan, why)


def probed(judge: Judge | None, probe: str | None) -> Judge | None:
    """``judge`` with ``--omk-judge-probe``'s probe around it (as it is without one)."""
    if judge is None or probe is None:
        return judge
    return LengthProbe(judge)
