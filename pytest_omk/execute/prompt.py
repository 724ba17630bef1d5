r"""Assemble the user prompt sent to the model, exactly as the format's owner does.

``[environment block + "\n\n---\n\n"] + prompt + ["\n\n```\n" + context + "\n```"]``.
URL resolution happens on ``prompt`` and ``context`` before this assembly.
"""

from __future__ import annotations

from pytest_omk.js.text import js_trim
from pytest_omk.models.sample import Environment

_ENV_HEADING = "Declared preconditions for this task (context only; nothing below was set up for you):"
_ENV_CLOSING = (
    "Take these as given and go straight to the task: do not spend steps checking whether the "
    "tools or files exist (for example with `which`, `test -f` or `find`)."
)


def environment_block(environment: Environment | None) -> str | None:
    """The English preconditions section, or ``None`` when the environment declares nothing."""
    if environment is None:
        return None
    lines: list[str] = []
    if environment.cli_available:
        lines.append("Command-line tools declared available (PATH was not changed):")
        lines.extend(f"- {tool}" for tool in environment.cli_available)
    if environment.files_available:
        lines.append("Files the task refers to (not created in the working directory):")
        lines.extend(f"- {path}" for path in environment.files_available)
    notes = js_trim(environment.notes or "")
    if notes:
        lines.append(f"Notes: {notes}")
    if not lines:
        return None
    return "\n".join([_ENV_HEADING, *lines, _ENV_CLOSING])


def build_user_prompt(prompt: str, context: str | None, environment: Environment | None) -> str:
    """The user message: environment section, prompt, and the context in a plain fence."""
    base = f"{prompt}\n\n```\n{context}\n```" if context else prompt
    block = environment_block(environment)
    return f"{block}\n\n---\n\n{base}" if block else base
