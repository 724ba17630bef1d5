"""Which judge to use: an explicit ``--omk-judge`` spec, else one detected from the environment.

Detection (CONTRACT §8): ``openai`` when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set (a local
OpenAI-compatible server needs only the URL), else ``anthropic`` when ``ANTHROPIC_API_KEY`` is set,
else no judge. ``--omk-judge none`` (or ``off``) turns the judge off even when a key is set, so a
run can avoid judge costs without unsetting variables the model under test needs.
"""

from __future__ import annotations

from collections.abc import Mapping

DISABLED = frozenset({"none", "off"})
"""Explicit specs meaning "no judge"."""


def _is_set(environ: Mapping[str, str], name: str) -> bool:
    # An exported-but-empty variable (``OPENAI_API_KEY=``) is how people unset things in CI.
    return bool(environ.get(name, "").strip())


def select_judge(spec: str | None, environ: Mapping[str, str]) -> str | None:
    """The judge executor spec to use, or ``None`` for no judge."""
    if spec is not None and spec.strip():
        spec = spec.strip()
        return None if spec.lower() in DISABLED else spec
    if _is_set(environ, "OPENAI_API_KEY") or _is_set(environ, "OPENAI_BASE_URL"):
        return "openai"
    if _is_set(environ, "ANTHROPIC_API_KEY"):
        return "anthropic"
    return None


def describe_selection(spec: str | None, environ: Mapping[str, str]) -> str:
    """One line saying which judge was chosen and why (terminal summary, ``--omk-judge`` help)."""
    chosen = select_judge(spec, environ)
    if spec is not None and spec.strip():
        return f"judge: {chosen} (--omk-judge)" if chosen else "judge: off (--omk-judge none)"
    if chosen == "openai":
        variable = "OPENAI_API_KEY" if _is_set(environ, "OPENAI_API_KEY") else "OPENAI_BASE_URL"
        return f"judge: openai (detected from {variable})"
    if chosen == "anthropic":
        return "judge: anthropic (detected from ANTHROPIC_API_KEY)"
    return "judge: none (set --omk-judge, or OPENAI_API_KEY / OPENAI_BASE_URL / ANTHROPIC_API_KEY)"


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
