"""The Markdown summary (``--omk-markdown``, ``$GITHUB_STEP_SUMMARY``) built from the JSON report document.

It says what a CI reader needs on the job page: totals, what changed against the baseline (a
section made for a pull-request comment, :mod:`.pr_comment`), variant comparisons, baseline
regressions, the answers a re-recording changed (:mod:`.answer_diff`), and each failed sample with
its one-line reasons. GitHub rejects a step summary over 1 MiB, so
the summary is cut to a byte budget, dropping failed-sample rows from the end with a note saying how
many were left out. Text from models and sample files is escaped so it cannot break the tables or
inject markup (GitHub sanitises HTML, but a ``|`` or a newline would still break a row).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_omk.compare.baseline import regression_parts
from pytest_omk.report.answer_diff import markdown_section as answers_section
from pytest_omk.report.calibration import markdown_section as calibration_section
from pytest_omk.report.markdown_text import cell
from pytest_omk.report.pr_comment import pr_comment_section
from pytest_omk.report.usage import ROLE_NAMES, role_line
from pytest_omk.report.view import (
    SCORE_COLUMNS,
    Doc,
    capped,
    display_name,
    failure_reasons,
    money,
    needs_attention,
    outcome_counts,
    score_text,
)

GITHUB_SUMMARY_LIMIT = 1024 * 1024
"""GitHub's limit for one step's summary, in bytes."""
REASON_CHARS = 240


def render_markdown(document: Doc, *, limit: int = GITHUB_SUMMARY_LIMIT) -> str:
    """The summary, at most ``limit`` UTF-8 bytes."""
    samples = document.get("samples") or []
    head = [
        *_totals(document),
        *pr_comment_section(document),
        *_comparisons(document),
        *_regressions(document),
        *calibration_section(document),
        *answers_section(samples),
    ]
    failed = [s for s in document.get("samples") or [] if needs_attention(s)]
    rows = [_failed_row(s) for s in failed]
    while True:
        text = "\n".join([*head, *_failed_section(rows, len(failed))]) + "\n"
        if len(text.encode("utf-8")) <= limit or not rows:
            return text if len(text.encode("utf-8")) <= limit else _cut(text, limit)
        # Drop rows in halves first so a huge failure list is cut in a few passes.
        rows = rows[: len(rows) // 2] if len(text.encode("utf-8")) > 2 * limit else rows[:-1]


def _totals(document: Doc) -> list[str]:
    summary: Doc = document.get("summary") or {}
    config: Doc = document.get("config") or {}
    counts = ", ".join(f"{n} {name}" for name, n in outcome_counts(document)) or "no samples ran"
    means: Doc = summary.get("means") or {}
    calls: Doc = summary.get("modelCalls") or {}
    judge = config.get("judge")
    lines = [
        f"## pytest-omk: {summary.get('samples', 0)} samples, {counts}",
        "",
        "| " + " | ".join(SCORE_COLUMNS) + " |",
        "|" + "---:|" * len(SCORE_COLUMNS),
        "| " + " | ".join(score_text(means.get(layer)) for layer in SCORE_COLUMNS) + " |",
        "",
        f"Executor {cell(config.get('executor') or 'none')}"
        + (f" ({cell(config['model'])})" if config.get("model") else "")
        + f" · judge {cell(judge) if judge else 'none'}"
        + (f" ({cell(config['judgeModel'])})" if judge and config.get("judgeModel") else "")
        + f" · model calls: {calls.get('live', 0)} live, {calls.get('replayed', 0)} replayed"
        + f" · cost {cell(money(summary.get('costUSD')))}",
    ]
    usage: Doc = summary.get("usage") or {}
    if (usage.get("judge") or {}).get("calls"):
        lines += ["", " · ".join(cell(role_line(role, usage[role])) for role in ROLE_NAMES if role in usage)]
    if summary.get("judgeReadingsMissing"):
        lines.append(f"Judge readings missing: {summary['judgeReadingsMissing']}")
    return lines + _spend(summary)


def _spend(summary: Doc) -> list[str]:
    """The budget, auto repeats, carried samples and weak samples, when the run used them."""
    lines: list[str] = []
    budget: Doc | None = summary.get("budget")
    if budget:
        spent = money(budget["spentUSD"]) + (
            f" of {money(budget['limitUSD'])}" if budget.get("limitUSD") is not None else ""
        )
        lines.append(f"Budget: {spent} spent, {budget['tokens']} tokens; {budget['notRun']} samples not run")
    repeats: Doc | None = summary.get("repeats")
    if repeats:
        lines.append(
            f"Auto repeats: {repeats['runs']} runs of {repeats['maximum']} at most ({repeats['saved']} saved)"
        )
    if summary.get("carried"):
        lines.append(f"Carried from the baseline (inputs unchanged, not run): {summary['carried']} samples")
    mutation: Doc | None = summary.get("mutation")
    if mutation:
        weak = ", ".join(cell(nodeid) for nodeid in mutation.get("weak") or []) or "none"
        lines.append(
            f"Mutation: {mutation['caught']}/{mutation['mutants']} mutants caught; weak samples: {weak}"
        )
    return ["", *lines] if lines else []


def _comparisons(document: Doc) -> list[str]:
    variants: Sequence[Doc] = document.get("variants") or []
    if not variants:
        return []
    lines = [
        "",
        "### Variants",
        "",
        "| variant | samples | passed | failed | " + " | ".join(SCORE_COLUMNS) + " |",
        "|---|---:|---:|---:|" + "---:|" * len(SCORE_COLUMNS),
    ]
    for v in variants:
        scores = " | ".join(score_text(v["means"].get(layer)) for layer in SCORE_COLUMNS)
        outcomes = v.get("outcomes") or {}
        lines.append(
            f"| {cell(v['name'])} | {v['samples']} | {outcomes.get('passed', 0)} | {outcomes.get('failed', 0)} | {scores} |"
        )
    lines.append("")
    for c in document.get("comparisons") or []:
        interval = c.get("interval") or {}
        if c.get("meanDifference") is None or not interval:
            lines.append(
                f"- {cell(c['variant'])} − {cell(c['reference'])}: {cell(c.get('verdict', 'not compared'))}"
            )
            continue
        lines.append(
            f"- {cell(c['variant'])} − {cell(c['reference'])} ({cell(c.get('metric', 'composite'))}): "
            f"{c['meanDifference']:+.2f} \\[{interval['low']:+.2f}, {interval['high']:+.2f}\\] "
            f"over {c.get('pairs', 0)} samples: **{cell(c.get('verdict', ''))}**"
        )
    return lines


def _regressions(document: Doc) -> list[str]:
    baseline: Doc | None = document.get("baseline")
    if not baseline:
        return []
    parts = regression_parts(baseline)
    # What was compared is said once, by the pull-request section above; this is the gate's verdict.
    head = ["", "### Regressions"]
    if not parts:
        return [*head, "", "No regressions."]
    return [
        *head,
        "",
        f"**{len(parts)} regression{'s' if len(parts) != 1 else ''}:**",
        *(f"- {cell(p)}" for p in parts),
    ]


def _failed_row(sample: Doc) -> str:
    reasons = "<br>".join(cell(capped(r, REASON_CHARS)) for r in failure_reasons(sample)) or "-"
    composite = score_text((sample.get("scores") or {}).get("composite"))
    return f"| {cell(display_name(sample))} | {cell(sample.get('outcome'))} | {composite} | {reasons} |"


def _failed_section(rows: list[str], total: int) -> list[str]:
    if not total:
        return []
    lines = [
        "",
        f"### Failed samples ({total})",
        "",
        "| sample | outcome | composite | reasons |",
        "|---|---|---:|---|",
        *rows,
    ]
    if len(rows) < total:
        lines += [
            "",
            f"_{total - len(rows)} more failed samples not shown: the summary is limited in size. "
            "See the JSON or HTML report for every sample._",
        ]
    return lines


def _cut(text: str, limit: int) -> str:
    """Last resort when even the head is too long: cut at a line and say so."""
    note = "\n\n_Summary truncated to fit the size limit._\n"
    budget = max(limit - len(note.encode("utf-8")), 0)
    cut = text.encode("utf-8")[:budget].decode("utf-8", "ignore").rsplit("\n", 1)[0]
    return cut + note
