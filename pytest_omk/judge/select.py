"""Which judge to use: what ``--omk-judge`` / ``omk_judge`` says, never what the environment holds.

An earlier version chose a judge from whichever provider variables were set (``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``ANTHROPIC_API_KEY``). Both ways that went wrong are why it no longer does:
a CI replay without those variables had no judge, so a recorded failing reading was never read and
the sample passed; and an app under test that set ``OPENAI_BASE_URL`` for itself switched on a paid
judge. ``none`` (or ``off``) says "no judge" explicitly.
"""

from __future__ import annotations

DISABLED = frozenset({"none", "off"})
"""Explicit specs meaning "no judge"."""


def select_judge(spec: str | None) -> str | None:
    """The judge executor spec to use, or ``None`` for no judge."""
    if spec is None or not spec.strip():
        return None
    spec = spec.strip()
    return None if spec.lower() in DISABLED else spec


def describe_selection(spec: str | None) -> str:
    """One line saying which judge was chosen and why."""
    chosen = select_judge(spec)
    if chosen:
        return f"judge: {chosen} (--omk-judge)"
    if spec is not None and spec.strip():
        return "judge: off (--omk-judge none)"
    return "judge: none (set --omk-judge or the ini key omk_judge)"


def _same_executor(a: str, b: str) -> bool:
    # "command:./run.sh" and "./run.sh" name the same command executor.
    return a.strip().removeprefix("command:").strip() == b.strip().removeprefix("command:").strip()


def same_model_warning(
    judge_spec: str | None, judge_model: str | None, executor_spec: str | None, model: str | None
) -> str | None:
    """A warning when the judge is the model under test, else ``None``.

    Both run on the same executor spec with the same model name (both unset counts as the same:
    the executor's default). A model grading its own answers tends to favour them.
    """
    if judge_spec is None or executor_spec is None or not _same_executor(judge_spec, executor_spec):
        return None
    if (judge_model or None) != (model or None):
        return None
    name = f"model {model!r}" if model else "its default model"
    return (
        f"the judge is the model under test ({judge_spec.strip()} with {name}): a model grading its "
        "own answers tends to favour them; set --omk-judge-model (or --omk-judge) to another model"
    )
