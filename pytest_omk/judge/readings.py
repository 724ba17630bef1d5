"""Readings from judge replies: a rubric dimension's (the mean of its replicates) and a judged assertion's.

A reply that could not be read as a score arrives as its defect (a string) and becomes a missing
reading, never a failing one: a broken judge is missing evidence, not a verdict on the model.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_omk.js.numbers import js_sum, round2, sample_sd
from pytest_omk.js.text import js_number
from pytest_omk.judge.parse import JudgeReply
from pytest_omk.models.results import Reading


def passes(score: float, threshold: float, message: str) -> Reading:
    """A scored reading: passed at or above ``threshold``."""
    if score >= threshold:
        return Reading.passed(message, score=score)
    return Reading.failed(message, score=score)


def dimension_reading(
    replies: Sequence[JudgeReply | str], threshold: float
) -> tuple[Reading, tuple[Reading, ...], float | None]:
    """A dimension's reading from its replicates, each replicate's, and the valid scores' SD."""
    each = tuple(
        passes(reply.score, threshold, reply.reason)
        if isinstance(reply, JudgeReply)
        else Reading.missing(reply, "judge-reply")
        for reply in replies
    )
    valid = [reply for reply in replies if isinstance(reply, JudgeReply)]
    defects = [reply for reply in replies if isinstance(reply, str)]
    if not valid:
        if len(replies) == 1:
            return Reading.missing(defects[0], "judge-reply"), each, None
        unique = "; ".join(dict.fromkeys(defects))
        return (
            Reading.missing(f"no usable judge reply in {len(replies)} readings: {unique}", "judge-reply"),
            each,
            None,
        )
    # The replicates themselves, for the judge's consistency (--omk-min-judge-consistency).
    each_score = tuple(float(r.score) if isinstance(r, JudgeReply) else None for r in replies)
    scores = [float(reply.score) for reply in valid]
    mean = round2(js_sum(scores) / len(scores))
    sd = sample_sd(scores)
    message = valid[0].reason
    if len(replies) > 1:
        listed = ", ".join(str(reply.score) for reply in valid)
        spread = f"; SD {js_number(sd)}" if sd is not None else ""
        message += f" (mean of {len(valid)}/{len(replies)} judge readings: {listed}{spread})"
    reading = passes(mean, threshold, message)
    if len(replies) > 1:
        reading = reading.model_copy(update={"replicates": each_score})
    return reading, each, sd


def assertion_reading(reply: JudgeReply | str, threshold: float, kind: str) -> Reading:
    """The raw reading of a judge-scored assertion (``not`` is applied later, by the grader)."""
    if isinstance(reply, str):
        return Reading.missing(f"{kind}: {reply}", "judge-reply")
    message = f"judge score {reply.score} (threshold {js_number(threshold)}): {reply.reason}"
    return passes(float(reply.score), threshold, message)
