"""The verdict stage: a sample and its run(s) in, graded readings, rubric readings and scores out.

No pytest here: the pytest layer turns a :class:`Verdict` into subtests, and ``report/`` turns it
into records. One run is the N = 1 case of ``--omk-repeat``: its checks' readings are the run's
own; with N > 1 each check's reading aggregates the runs (pass rate against
``--omk-min-pass-rate``) and the sample's scores are the per-layer means.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_omk.grade.base import GradeContext
from pytest_omk.grade.registry import grade_sample
from pytest_omk.grade.repeats import check_verdict, mean_scores, pass_rate_message, repeats_record
from pytest_omk.grade.scoring import Scores, judge_layer, score_sample, scores_record
from pytest_omk.grade.sequential import StopRule
from pytest_omk.grade.stats import mean2, present, sd3
from pytest_omk.js.numbers import js_sum, to_fixed
from pytest_omk.models import Sample
from pytest_omk.models.results import Reading
from pytest_omk.models.run import SampleRun

if TYPE_CHECKING:
    from pytest_omk.js.v8 import JsEngine

NO_JUDGE = "not scored: no judge configured (set --omk-judge)"


class VerdictSettings(Protocol):
    """The options a verdict depends on (the run's ``Settings`` value has them)."""

    @property
    def strict(self) -> bool:
        """``--omk-strict``."""
        ...

    @property
    def min_composite(self) -> float | None:
        """``--omk-min-composite``."""
        ...

    @property
    def min_pass_rate(self) -> float:
        """``--omk-min-pass-rate``."""
        ...


@dataclass(frozen=True)
class GradedRun:
    """One run of a sample, graded: the readings of its checks and its scores."""

    readings: list[Reading]
    """Top-level assertion readings, by index."""
    rubric: dict[str, Reading]
    """Rubric dimension readings, by name (in the rubric's order)."""
    scores: Scores

    def statuses(self) -> list[str]:
        """Each check's status: assertions by index, then rubric dimensions."""
        return [str(r.status) for r in self.readings] + [str(r.status) for r in self.rubric.values()]

    def failed_checks(self, *, strict: bool) -> int:
        """Checks that count as failed (missing ones too under ``--omk-strict``)."""
        return sum(status == "fail" or (strict and status == "missing") for status in self.statuses())


@dataclass(frozen=True)
class Repeats:
    """What N > 1 runs add: per-check tallies, rubric spreads, the ``repeats`` section, mean scores."""

    tallies: list[dict[str, int]]
    rubric_detail: dict[str, dict[str, Any]]
    record: dict[str, Any]
    scores: dict[str, float | None]


@dataclass(frozen=True)
class ChecksFailed:
    """Why a single run failed when checks failed: the counts, kept as values for the failure line."""

    failed: int
    total: int
    composite: float | None

    def text(self, names: str | None = None) -> str:
        """``N of M checks failed (composite X)``, with ``: names`` after the count when given."""
        named = "" if names is None else f": {names}"
        return f"{self.failed} of {self.total} checks failed{named} (composite {_fmt(self.composite)})"


@dataclass(frozen=True)
class Verdict:
    """A sample's graded result."""

    runs: list[GradedRun]
    readings: list[Reading]
    """One reading per top-level assertion (aggregated over the runs when N > 1)."""
    rubric: dict[str, Reading]
    failure: str | None
    """Why the sample failed (one line), or ``None``."""
    repeats: Repeats | None = None
    """Only when the sample ran more than once."""
    checks_failed: ChecksFailed | None = None
    """The counts behind ``failure`` when a single run failed checks."""


def grade_run(
    sample: Sample, base_dir: Path, run: SampleRun, js: JsEngine, mask: Callable[[str], str] = str
) -> GradedRun:
    """Grade one run (deterministic checks plus the judge's readings) and score it.

    ``js`` is the engine for JavaScript-semantics checks (text matching, regexes, schemas); ``mask``
    the run's secret masking, applied to what messages quote before it is cut.
    """
    assertions = list(sample.assertions or [])
    ctx = GradeContext(
        execution=run.execution,
        sample=sample,
        base_dir=base_dir,
        judge_readings=run.judge.assertions,
        js=js,
        mask=mask,
    )
    readings = grade_sample(assertions, ctx)
    rubric = {
        name: run.judge.rubric.get(name) or Reading.missing(NO_JUDGE, "no-judge")
        for name in sample.rubric or {}
    }
    weights = {name: dim.weight for name, dim in (sample.rubric or {}).items()}
    judge = (
        judge_layer({n: r.score if r.status != "missing" else None for n, r in rubric.items()}, weights)
        if rubric
        else None
    )
    return GradedRun(readings, rubric, score_sample(assertions, readings, judge))


def verdict(
    sample: Sample,
    base_dir: Path,
    runs: list[SampleRun],
    settings: VerdictSettings,
    js: JsEngine,
    *,
    auto_max: int | None = None,
    mask: Callable[[str], str] = str,
) -> Verdict:
    """Grade every run of ``sample`` and decide whether it passed.

    ``auto_max``: the runs were ``--omk-repeat auto``'s, with this maximum (always a repeated record).
    """
    graded = [grade_run(sample, base_dir, run, js, mask) for run in runs]
    if len(graded) > 1 or auto_max is not None:
        return _repeated(sample, runs, graded, settings, auto_max)
    [only] = graded
    failed = only.failed_checks(strict=settings.strict)
    composite = only.scores.composite
    failure, checks = None, None
    if failed:
        checks = ChecksFailed(failed, len(only.statuses()), composite)
        failure = checks.text()
    elif settings.min_composite is not None and (composite is None or composite < settings.min_composite):
        failure = f"composite {_fmt(composite)} is below --omk-min-composite {settings.min_composite:g}"
    return Verdict(graded, only.readings, only.rubric, failure, checks_failed=checks)


def _aggregate(readings: list[Reading], settings: VerdictSettings) -> tuple[Reading, dict[str, int]]:
    """One check's runs → a single reading (status and message across runs, mean judge score)."""
    statuses, messages = [r.status for r in readings], [r.message for r in readings]
    check = check_verdict(statuses, messages, strict=settings.strict, min_pass_rate=settings.min_pass_rate)
    score = mean2(r.score for r in readings if r.status != "missing")
    # The cause of the first run that reads as the aggregate does (a missing check: why it is missing).
    cause = next((r.cause for r in readings if r.status == check.status and r.cause), None)
    reading = Reading(status=check.status, message=check.message, score=score, cause=cause)
    return reading, check.tally.as_record()


def run_passed(
    sample: Sample, base_dir: Path, run: SampleRun, settings: VerdictSettings, js: JsEngine
) -> bool:
    """Whether one run passed (``--omk-repeat auto`` decides after each run whether to go on)."""
    return _run_passed(grade_run(sample, base_dir, run, js), settings)


def _run_passed(graded: GradedRun, settings: VerdictSettings) -> bool:
    """A run passed when no check failed and its composite met ``--omk-min-composite`` (if set)."""
    if graded.failed_checks(strict=settings.strict):
        return False
    composite, minimum = graded.scores.composite, settings.min_composite
    return minimum is None or (composite is not None and composite >= minimum)


def _repeated(
    sample: Sample,
    runs: list[SampleRun],
    graded: list[GradedRun],
    settings: VerdictSettings,
    auto_max: int | None,
) -> Verdict:
    pairs = [
        _aggregate([g.readings[i] for g in graded], settings) for i in range(len(sample.assertions or []))
    ]
    rubric: dict[str, Reading] = {}
    detail: dict[str, dict[str, Any]] = {}
    for name in sample.rubric or {}:
        per_run = [g.rubric[name] for g in graded]
        rubric[name], tally = _aggregate(per_run, settings)
        scores = [r.score if r.status != "missing" else None for r in per_run]
        detail[name] = {"readings": scores, "sd": sd3(scores), "runs": tally}
    readings = [reading for reading, _ in pairs]
    run_scores = [scores_record(g.scores) for g in graded]
    run_passed = [_run_passed(g, settings) for g in graded]
    costs = [run.execution.costUSD for run in runs]
    details = [
        {"repeat": i, "passed": ok, "scores": scores, "replayed": run.execution.replayed, "costUSD": cost}
        for i, (ok, scores, run, cost) in enumerate(zip(run_passed, run_scores, runs, costs, strict=True))
    ]
    record = repeats_record(run_passed, run_scores, run_details=details)
    if auto_max is not None:
        record["auto"] = auto_record(sum(run_passed), len(run_passed), auto_max, settings.min_pass_rate)
    known_costs = present(costs)
    record["costUSD"] = to_fixed(js_sum(known_costs), 6) if known_costs else None
    failed_checks = sum(r.status == "fail" for r in [*readings, *rubric.values()])
    failure = None
    if record["passRate"] < settings.min_pass_rate:
        failure = pass_rate_message(record, settings.min_pass_rate)
    elif failed_checks:  # only possible when a run failed on --omk-min-composite alone
        failure = f"{failed_checks} of {len(readings) + len(rubric)} checks passed in too few runs"
    repeats = Repeats([tally for _, tally in pairs], detail, record, mean_scores(run_scores))
    return Verdict(graded, readings, rubric, failure, repeats)


def auto_record(passed: int, runs: int, maximum: int, min_pass_rate: float) -> dict[str, Any]:
    """``repeats.auto``: the maximum, the runs saved against it, and how the repeats stopped."""
    decided = StopRule(maximum, min_pass_rate).decide(passed, runs) if runs < maximum else None
    return {"max": maximum, "saved": maximum - runs, "decided": decided or "max"}


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
