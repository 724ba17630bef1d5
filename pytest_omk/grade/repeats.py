"""Repeats (``--omk-repeat N``): aggregate N independent runs of one sample.

A *check* (an assertion or a rubric dimension) is read once per run. Its pass rate is the share of
the runs where it was observed that it passed (under ``--omk-strict`` a missing reading counts as a
failed run instead of being left out). A *run* passed when none of its checks failed (and its
composite met ``--omk-min-composite``); the sample's pass rate is the share of passed runs, and
pass^N says whether all N passed. Scores are summarized per layer as the mean (2 decimals) and the
sample standard deviation (n − 1, 3 decimals) over the runs where the layer was present.

``--omk-repeat auto`` (its stopping rule: :mod:`.sequential`) adds the summary's ``repeats`` part
and line: the runs made, the most it could have made, and the difference saved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_omk.grade.stats import mean2, sd3

SCORE_LAYERS = ("assertions", "fact", "behavior", "judge", "composite")
Status = Literal["pass", "fail", "missing"]


@dataclass(frozen=True)
class CheckTally:
    """How one check read across the runs."""

    passed: int
    failed: int
    missing: int

    @classmethod
    def of(cls, statuses: Sequence[str]) -> CheckTally:
        """The tally of one check's statuses across the runs."""
        return cls(statuses.count("pass"), statuses.count("fail"), statuses.count("missing"))

    @property
    def runs(self) -> int:
        """How many runs read the check."""
        return self.passed + self.failed + self.missing

    def pass_rate(self, *, strict: bool) -> float | None:
        """Share of counted runs that passed; ``None`` when no run counts (all missing, not strict)."""
        counted = self.runs if strict else self.passed + self.failed
        return self.passed / counted if counted else None

    def as_record(self) -> dict[str, int]:
        """The tally as the record writes it."""
        return {"pass": self.passed, "fail": self.failed, "missing": self.missing}


@dataclass(frozen=True)
class CheckVerdict:
    """The aggregated reading of one check: its status across runs and a one-line message."""

    status: Status
    message: str
    tally: CheckTally


def check_verdict(
    statuses: Sequence[str], messages: Sequence[str], *, strict: bool, min_pass_rate: float
) -> CheckVerdict:
    """Aggregate one check's per-run readings (``statuses[i]`` / ``messages[i]`` of run ``i``).

    The check fails only when its pass rate is below ``min_pass_rate``; the message then names the
    first failing run and quotes its reason. All runs missing (and not strict) → missing.
    """
    tally = CheckTally.of(statuses)
    rate = tally.pass_rate(strict=strict)
    if rate is None:
        return CheckVerdict("missing", messages[0] if messages else "missing evidence", tally)
    counted = tally.runs if strict else tally.passed + tally.failed
    message = f"passed {tally.passed}/{counted} runs"
    if tally.missing and not strict:
        message += f" ({tally.missing} missing)"
    if rate >= min_pass_rate:
        return CheckVerdict("pass", message, tally)
    bad = "fail" if tally.failed else "missing"
    first = next(i for i, status in enumerate(statuses) if status == bad)
    reason = messages[first] if bad == "fail" else f"missing evidence (--omk-strict): {messages[first]}"
    return CheckVerdict(
        "fail", f"{message}, below --omk-min-pass-rate {min_pass_rate:g}; run {first}: {reason}", tally
    )


def layer_summary(run_scores: Sequence[Mapping[str, float | None]]) -> dict[str, dict[str, float | None]]:
    """Per score layer, ``{"mean", "sd"}`` over the runs where it is present."""
    return {
        layer: {"mean": mean2(s.get(layer) for s in run_scores), "sd": sd3(s.get(layer) for s in run_scores)}
        for layer in SCORE_LAYERS
    }


def repeats_record(
    run_passed: Sequence[bool],
    run_scores: Sequence[Mapping[str, float | None]],
    *,
    run_details: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The record's ``repeats`` section: ``n``, pass counts, pass rate, pass^N and layer stats."""
    if len(run_passed) != len(run_scores) or not run_passed:
        raise ValueError("one pass flag and one score set per run are needed (at least one run)")
    n = len(run_passed)
    passed = sum(run_passed)
    record: dict[str, Any] = {
        "n": n,
        "passed": passed,
        "passRate": passed / n,
        "passAll": passed == n,
        **layer_summary(run_scores),
    }
    if run_details:
        record["runs"] = [dict(detail) for detail in run_details]
    return record


def mean_scores(run_scores: Sequence[Mapping[str, float | None]]) -> dict[str, float | None]:
    """The per-layer means of the runs: the ``scores`` of a repeated sample."""
    return {layer: mean2(s.get(layer) for s in run_scores) for layer in SCORE_LAYERS}


def pass_rate_message(record: Mapping[str, Any], min_pass_rate: float) -> str:
    """Why a repeated sample failed: its pass rate, pass^N and composite mean ± SD."""
    n = record["n"]
    composite = record["composite"]
    spread = "" if composite["sd"] is None else f" ± {composite['sd']:.3f}"
    score = "n/a" if composite["mean"] is None else f"{composite['mean']:.2f}{spread}"
    return (
        f"pass rate {record['passRate']:.2f} ({record['passed']}/{n} runs) is below --omk-min-pass-rate "
        f"{min_pass_rate:g}; pass^{n}: {'yes' if record['passAll'] else 'no'}; composite {score}"
    )


def repeat_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    """The summary's ``repeats`` section under ``--omk-repeat auto``: runs made, most possible, saved."""
    autos = [
        (row["repeats"]["n"], row["repeats"]["auto"])
        for row in rows
        if (row.get("repeats") or {}).get("auto")
    ]
    if not autos:
        return None
    runs = sum(n for n, _ in autos)
    maximum = sum(int(auto["max"]) for _, auto in autos)
    return {"runs": runs, "maximum": maximum, "saved": maximum - runs}


def repeat_lines(section: Mapping[str, Any] | None) -> list[str]:
    """``auto repeats: 817 runs of 2000 at most (1183 saved)`` (nothing without ``auto``)."""
    if not section:
        return []
    return [
        f"auto repeats: {section['runs']} runs of {section['maximum']} at most ({section['saved']} saved)"
    ]
