"""Read-only helpers over the JSON report document, shared by the HTML and Markdown renderers.

Both renderers take the document ``--omk-report`` writes (schema ``pytest-omk.report/v1``) and
nothing else, so they keep working however the pytest layer that builds it is arranged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_omk._util.money import money as money  # re-exported: the renderers' money

SCORE_COLUMNS = ("composite", "fact", "behavior", "judge")
"""The scores shown per sample, in display order (``assertions`` is the flat score behind them)."""
OUTCOME_ORDER = ("failed", "error", "xpassed", "passed", "xfailed", "skipped", "unknown")
"""Outcomes as summaries list them: what needs attention first."""

Doc = Mapping[str, Any]


def score_text(value: float | None, *, signed: bool = False) -> str:
    """Two decimals, ``-`` when missing."""
    if value is None:
        return "-"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def millis(value: float | None) -> str:
    """A latency in whole milliseconds, ``-`` when unknown."""
    return "-" if value is None else f"{value:.0f} ms"


def sample_cost(sample: Doc) -> float | None:
    """All runs' cost with ``--omk-repeat``, else the one execution's."""
    repeats = sample.get("repeats")
    if repeats:
        cost = repeats.get("costUSD")
        return None if cost is None else float(cost)
    execution = sample.get("execution") or {}
    cost = execution.get("costUSD")
    return None if cost is None else float(cost)


def sample_latency(sample: Doc) -> float | None:
    """The execution's latency in milliseconds."""
    latency = (sample.get("execution") or {}).get("latencyMs")
    return None if latency is None else float(latency)


def outcome_counts(document: Doc) -> list[tuple[str, int]]:
    """``(outcome, count)`` pairs of the summary, in :data:`OUTCOME_ORDER`, zeros left out."""
    counts: Mapping[str, int] = document.get("summary", {}).get("outcomes", {})
    known = [(name, counts[name]) for name in OUTCOME_ORDER if counts.get(name)]
    return known + sorted((k, v) for k, v in counts.items() if k not in OUTCOME_ORDER and v)


def failure_reasons(sample: Doc) -> list[str]:
    """One line per failed check (``assertion 1: regex: ...``, ``rubric: tone: ...``), or the error."""
    if sample.get("error"):
        return [str(sample["error"])]
    reasons = [
        f"assertion {a['index']}: {a['type']}: {a['message']}"
        for a in sample.get("assertions", [])
        if a.get("status") == "fail"
    ]
    reasons += [
        f"rubric: {name}: {r.get('reason', '')}"
        for name, r in (sample.get("rubric") or {}).items()
        if r.get("status") == "fail"
    ]
    return reasons


def needs_attention(sample: Doc) -> bool:
    """Failed, errored or unexpectedly passed: the samples a summary lists one by one."""
    return sample.get("outcome") in ("failed", "error", "xpassed")


def display_name(sample: Doc) -> str:
    """``<sample_id>`` or ``<sample_id>[variant]``, prefixed by the file when the run had several."""
    name = str(sample.get("sample_id", ""))
    if sample.get("variant"):
        name += f"[{sample['variant']}]"
    return name


def capped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


_SOURCES = {
    "command line": "the command line",
    "ini": "the ini file",
    "hook": "the pytest_omk_make_executor hook",
    "fixture": "the omk_app fixture",
}


def executor_text(config: Doc) -> str:
    """The executor that answered, where it came from and what was configured but not used."""
    shown = str(config.get("executor") or "none")
    source, note = config.get("executorSource"), config.get("executorNote")
    parts = [f"from {_SOURCES.get(str(source), str(source))}" if source else None, note]
    details = "; ".join(str(part) for part in parts if part)
    return f"{shown} ({details})" if details else shown
