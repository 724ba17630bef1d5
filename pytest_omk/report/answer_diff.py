"""Re-record review: the samples whose recorded answer a run replaced, and old -> new as a diff.

A run in record mode ``all`` or ``rewrite`` that replaces a recording with a different answer keeps
the previous answer in the sample's record (``execution.previousOutput``). The terminal lists those
samples; the Markdown summary and the HTML report show each change as a line diff, the way a
snapshot tool's review does, so the behaviour change is seen in the pull request that commits it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from pytest_omk.report.markdown_text import cell, fenced
from pytest_omk.report.view import Doc

DIFF_LINES = 80
"""Lines of one sample's diff shown in the Markdown summary (the HTML report shows it whole)."""


def changed_answers(samples: Iterable[Doc]) -> list[Doc]:
    """The samples whose answer was replaced by a different one, in report order."""
    return [s for s in samples if (s.get("execution") or {}).get("previousOutput") is not None]


def answer_diff(old: str, new: str) -> list[tuple[str, str]]:
    """``(tag, line)`` pairs from old to new: ``"-"`` removed, ``"+"`` added, ``" "`` kept."""
    before, after = old.split("\n"), new.split("\n")
    pairs: list[tuple[str, str]] = []
    for op, a1, a2, b1, b2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if op == "equal":
            pairs += [(" ", line) for line in before[a1:a2]]
            continue
        pairs += [("-", line) for line in before[a1:a2]]
        pairs += [("+", line) for line in after[b1:b2]]
    return pairs


def terminal_lines(samples: Sequence[Doc]) -> list[str]:
    """``answers changed by re-recording: N`` and one indented node id per sample (none: nothing)."""
    changed = changed_answers(samples)
    if not changed:
        return []
    return [
        f"answers changed by re-recording: {len(changed)}",
        *(f"  {s.get('nodeid', '')}" for s in changed),
    ]


def markdown_section(samples: Sequence[Doc]) -> list[str]:
    """A ``diff`` block per changed sample, each cut to :data:`DIFF_LINES` lines."""
    changed = changed_answers(samples)
    if not changed:
        return []
    lines = ["", f"### Answers changed by re-recording ({len(changed)})"]
    for sample in changed:
        execution: Doc = sample["execution"]
        pairs = answer_diff(str(execution["previousOutput"]), str(execution.get("output", "")))
        body = [tag + line for tag, line in pairs[:DIFF_LINES]]
        if len(pairs) > DIFF_LINES:
            body.append(f" … {len(pairs) - DIFF_LINES} more lines in the HTML report")
        lines += ["", f"**{cell(sample.get('nodeid', ''))}**", "", *fenced("\n".join(body), "diff")]
    return lines
