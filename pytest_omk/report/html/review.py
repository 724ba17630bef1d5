"""The details panel's re-record review: the previous recorded answer and the new one as a line diff."""

from __future__ import annotations

from pytest_omk.report.answer_diff import answer_diff
from pytest_omk.report.html.escape import text
from pytest_omk.report.view import Doc

_TAGS = {"-": ("del", "diff"), "+": ("ins", "diff"), " ": ("span", "same")}


def answer_change(sample: Doc) -> str:
    """``<h4>`` and a ``<pre class="answer-diff">`` of removed (``<del>``) and added (``<ins>``)
    lines; empty when the run did not replace this sample's recorded answer."""
    execution: Doc = sample.get("execution") or {}
    previous = execution.get("previousOutput")
    if previous is None:
        return ""
    lines = []
    for tag, line in answer_diff(str(previous), str(execution.get("output", ""))):
        element, css = _TAGS[tag]
        lines.append(f'<{element} class="{css}">{text(line)}</{element}>')
    return f'<h4>Answer changed by re-recording</h4><pre class="answer-diff">{"".join(lines)}</pre>'
