"""The ``omk scores`` terminal section: pure functions from records to lines."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pytest_omk.js.numbers import js_sum, round2
from pytest_omk.report.fit import fit_table
from pytest_omk.report.usage import total_cost, usage_lines, usage_totals
from pytest_omk.report.view import money

LAYER_COLUMNS = ("composite", "fact", "behavior", "judge")
CUT_SHORT = frozenset({"length", "max_tokens", "model_context_window_exceeded"})
"""Stop reasons of an answer that ended because it ran out of tokens (OpenAI-compatible servers say
``length``, the Messages API ``max_tokens`` or ``model_context_window_exceeded``)."""


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Run totals: mean per layer, outcome counts, model calls, cost, missing judge readings."""
    means: dict[str, float | None] = {}
    for layer in ("assertions", *LAYER_COLUMNS):
        values = [r["scores"][layer] for r in rows if r["scores"][layer] is not None]
        means[layer] = round2(js_sum(values) / len(values)) if values else None
    # Why judge readings are missing, most frequent first, grouped by the readings' cause codes.
    reasons = Counter(
        _reason(entry.get("cause"))
        for r in rows
        for entry in r["rubric"].values()
        if entry["status"] == "missing"
    )
    reasons.update(
        _reason(entry.get("cause"))
        for r in rows
        for entry in r["assertions"]
        if entry["status"] == "missing" and _judge_missing(entry)
    )
    usage = usage_totals(rows)
    # Scores and costs are summed and rounded as the reference does (left to right, toFixed); the
    # counts are whole numbers, which the builtin sum adds exactly.
    totals: dict[str, Any] = {
        "samples": len(rows),
        "outcomes": dict(Counter(r["outcome"] for r in rows)),
        "means": means,
        "modelCalls": {
            "live": sum(r["modelCalls"]["live"] for r in rows),
            "replayed": sum(r["modelCalls"]["replayed"] for r in rows),
        },
        "usage": usage,
        "costUSD": total_cost(usage),
        "judgeReadingsMissing": sum(reasons.values()),
        "judgeMissingReasons": dict(reasons.most_common()),
        **_run_notes(rows),
    }
    # Written only when there is something to say (optional keys of the summary).
    skipped = Counter(r["skipReason"] for r in rows if r.get("skipReason") and r["outcome"] == "skipped")
    if skipped:
        totals["skipReasons"] = dict(skipped.most_common())
    ignored = sum(1 for r in rows if r.get("judgeRecordingsIgnored"))
    if ignored:
        totals["judgeRecordingsIgnored"] = ignored
    return totals


def _run_notes(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Answers cut short, judge endpoints that refused a structured output, and the judge found to
    be the model under test (each said once, however many samples saw it)."""
    refused: dict[str, Any] = {}
    for row in rows:
        refused.update(row.get("judgeFormatRefused") or {})
    same = sorted({r["judgeSameModel"] for r in rows if r.get("judgeSameModel")})
    # The judge's keys only when there is something to say (most runs have nothing to say).
    return {
        "cutOff": sum(1 for r in rows if (r["execution"] or {}).get("stopReason") in CUT_SHORT),
        **({"judgeFormatRefused": dict(sorted(refused.items()))} if refused else {}),
        **({"judgeSameModel": same} if same else {}),
    }


# The human name of each judge cause: the keys of ``judgeMissingReasons`` and the terminal's line.
REASONS: dict[str, str] = {
    "no-judge": "no judge configured",
    "judge-reply": "unusable judge reply",
    "judge-input": "nothing to judge against",
    "judge-error": "judge call failed",
}
UNRECORDED = "cause not recorded"
"""An entry of a report written before readings carried a cause (``--omk-merge`` of old reports)."""


def _reason(cause: str | None) -> str:
    return REASONS.get(cause or "", UNRECORDED)


def _judge_missing(entry: dict[str, Any]) -> bool:
    """Whether a missing assertion reading is a judge-scored check's."""
    cause = entry.get("cause")
    if cause is None:
        return _is_llm(entry["type"])
    from pytest_omk.models.results import JUDGE_CAUSES  # not at plugin load: pydantic models

    return cause in JUDGE_CAUSES


def _cost(row: dict[str, Any]) -> float | None:
    """The sample's cost: every run's with ``--omk-repeat``, else its one execution's."""
    repeats = row.get("repeats")
    if repeats:
        return repeats.get("costUSD")  # type: ignore[no-any-return]
    return row["execution"]["costUSD"] if row["execution"] else None


def _is_llm(kind: str) -> bool:
    from pytest_omk.models import ASSERTION_CLASSES

    cls = ASSERTION_CLASSES.get(kind)
    return bool(cls and cls.is_llm)


def _latency(ms: float | None) -> str:
    """``812ms``; from 10 s on ``12.3s``, so the column stays narrow."""
    if ms is None:
        return "-"
    return f"{ms:.0f}ms" if ms < 10_000 else f"{ms / 1000:.1f}s"


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _repeat_cells(repeats: dict[str, Any] | None) -> list[str]:
    if not repeats:
        return ["-", "-"]
    sd = repeats["composite"]["sd"]
    return [f"{repeats['passed']}/{repeats['n']}", "-" if sd is None else f"{sd:.3f}"]


def render_summary(
    rows: list[dict[str, Any]],
    *,
    verbose: bool,
    width: int = 80,
    wide: bool = False,
    totals: dict[str, Any] | None = None,
) -> list[str]:
    """Lines of the section: a table of samples (unless quiet) in ``width`` columns (all of it when
    ``wide``), then the totals (``totals``: the run's summary, when it counts more than the rows,
    such as calls of samples not run)."""
    lines: list[str] = []
    if verbose:
        lines.extend(fit_table(_sample_table(rows), width=width, wide=wide))
        lines.append("")
    return lines + _totals_lines(totals or summarize(rows))


def _sample_table(rows: list[dict[str, Any]]) -> list[list[str]]:
    """The table of samples, header first."""
    # With --omk-repeat: the passed runs and the composite's SD across runs, after the outcome.
    repeated = any(r.get("repeats") for r in rows)
    header = [
        "sample",
        "outcome",
        *(["runs", "sd"] if repeated else []),
        *LAYER_COLUMNS,
        "cost",
        "latency",
        "replayed",
    ]
    table = [header]
    for r in rows:
        execution = r["execution"] or {}
        table.append(
            [
                r["nodeid"],
                f"{r['outcome']} (carried)" if r.get("carried") else r["outcome"],
                *(_repeat_cells(r.get("repeats")) if repeated else []),
                *(_cell(r["scores"][layer]) for layer in LAYER_COLUMNS),
                money(_cost(r)),
                _latency(execution.get("latencyMs")),
                "-" if not execution else ("yes" if execution.get("replayed") else "no"),
            ]
        )
    return table


def _skip_reasons(totals: dict[str, Any]) -> str:
    """`` (2 × no executor configured ...)``: why samples were skipped, without ``-rs``."""
    reasons = totals.get("skipReasons") or {}
    if not reasons:
        return ""
    if len(reasons) == 1:
        return f" ({next(iter(reasons))})"
    return " (" + "; ".join(f"{count} × {why}" for why, count in reasons.items()) + ")"


def _totals_lines(totals: dict[str, Any]) -> list[str]:
    """The totals: mean per layer, outcome counts, calls and cost, missing judge readings."""
    means = totals["means"]
    lines = ["mean: " + "  ".join(f"{layer} {_cell(means[layer])}" for layer in LAYER_COLUMNS)]
    counts = totals["outcomes"]
    lines.append(
        f"samples: {totals['samples']}  "
        + "  ".join(
            f"{k} {counts[k]}{_skip_reasons(totals) if k == 'skipped' else ''}"
            for k in ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
            if k in counts
        )
    )
    calls = totals["modelCalls"]
    cost = totals["costUSD"]
    lines.append(f"model calls: {calls['live']} live, {calls['replayed']} replayed  cost: {money(cost)}")
    lines.extend(f"  {line}" for line in usage_lines(totals.get("usage") or {}))
    if totals["judgeReadingsMissing"]:
        causes = "; ".join(f"{count} × {why}" for why, count in totals["judgeMissingReasons"].items())
        lines.append(f"judge readings missing: {totals['judgeReadingsMissing']} ({causes})")
    return lines + _notes_lines(totals)


def _notes_lines(totals: dict[str, Any]) -> list[str]:
    """One line per thing the run learned about its servers (nothing when all went as asked)."""
    lines = []
    if totals.get("cutOff"):
        lines.append(
            f"answers cut at the token limit: {totals['cutOff']} (stopReason length or max_tokens; "
            "see --omk-max-tokens and the server's context size)"
        )
    for endpoint, refusal in (totals.get("judgeFormatRefused") or {}).items():
        lines.append(
            f"judge: {endpoint} refused response_format {refusal['format']} ({refusal['reason']}); "
            "judged without it for the rest of the run"
        )
    if totals.get("judgeSameModel"):
        lines.append(
            f"warning: the judge is the model under test ({', '.join(totals['judgeSameModel'])}): a model "
            "grading its own answers tends to favour them; judge with another model (--omk-judge-model, --omk-judge)"
        )
    ignored = totals.get("judgeRecordingsIgnored")
    if ignored:
        lines.append(
            f"recordings hold judge readings for {ignored} sample{'' if ignored == 1 else 's'} "
            "that no judge read: set --omk-judge to use them"
        )
    return lines
