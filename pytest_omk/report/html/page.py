"""The HTML page: run header, charts, the sample table and each sample's details."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources

from pytest_omk.report.html.calibration import html_section
from pytest_omk.report.html.details import sample_details
from pytest_omk.report.html.escape import text
from pytest_omk.report.html.policy import content_security_policy
from pytest_omk.report.html.sections import all_charts
from pytest_omk.report.usage import ROLE_NAMES, role_summary
from pytest_omk.report.view import (
    SCORE_COLUMNS,
    Doc,
    display_name,
    executor_text,
    millis,
    money,
    outcome_counts,
    sample_cost,
    sample_latency,
    score_text,
)


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def render_html(document: Doc) -> str:
    """The whole page for one report document (schema ``pytest-omk.report/v1``)."""
    style, script = _asset("report.css"), _asset("report.js")
    policy = content_security_policy(style, script)
    samples: list[Doc] = list(document.get("samples") or [])
    charts = all_charts(document)
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{text(_title(document))}</title><style>{style}</style></head><body>",
            _header(document),
            f'<section class="charts"><h2>Charts</h2>{"".join(charts)}</section>' if charts else "",
            html_section(document),  # --omk-gold's judge agreement
            _table(samples),
            f'<div id="details">{_details(samples)}</div>',
            f"<script>{script}</script></body></html>\n",
        ]
    )


def _details(samples: Sequence[Doc]) -> str:
    """Every sample's details panel; an A/B run's show the sample's variants side by side."""
    by_sample: dict[tuple[str, str], list[Doc]] = {}
    for sample in samples:
        if sample.get("variant") is not None:
            by_sample.setdefault((str(sample.get("file")), str(sample.get("sample_id"))), []).append(sample)
    return "".join(
        sample_details(i, s, by_sample.get((str(s.get("file")), str(s.get("sample_id"))), ()))
        for i, s in enumerate(samples)
    )


def _title(document: Doc) -> str:
    summary = document.get("summary") or {}
    counts = ", ".join(f"{n} {name}" for name, n in outcome_counts(document))
    return f"pytest-omk: {summary.get('samples', 0)} samples" + (f" ({counts})" if counts else "")


def _usage_facts(summary: Doc) -> list[tuple[str, str]]:
    """The model under test's calls and the judge's, apart (when the judge made any)."""
    usage: Doc = summary.get("usage") or {}
    if not (usage.get("judge") or {}).get("calls"):
        return []
    return [(f"{ROLE_NAMES[role]} calls", role_summary(usage[role])) for role in ROLE_NAMES if role in usage]


def _header(document: Doc) -> str:
    config: Doc = document.get("config") or {}
    summary: Doc = document.get("summary") or {}
    calls: Doc = summary.get("modelCalls") or {}
    judge = config.get("judge")
    facts = [
        ("executor", executor_text(config)),
        ("model", config.get("model") or "executor's default"),
        ("judge", f"{judge} ({config.get('judgeModel') or 'default model'})" if judge else "none"),
        ("record mode", config.get("recordMode")),
        ("model calls", f"{calls.get('live', 0)} live, {calls.get('replayed', 0)} replayed"),
        ("cost", money(summary.get("costUSD"))),
        *_usage_facts(summary),
        ("judge readings missing", summary.get("judgeReadingsMissing", 0)),
        ("written", document.get("createdAt")),
        ("plugin", (document.get("plugin") or {}).get("version")),
    ]
    items = "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in facts if v is not None)
    outcomes = "".join(
        f'<li class="badge {text(name)}">{text(count)} {text(name)}</li>'
        for name, count in outcome_counts(document)
    )
    means: Doc = summary.get("means") or {}
    mean_items = "".join(
        f'<li><span class="layer">{text(layer)}</span> {text(score_text(means.get(layer)))}</li>'
        for layer in SCORE_COLUMNS
    )
    return (
        f'<header><h1>{text(_title(document))}</h1><ul class="outcomes">{outcomes}</ul>'
        f'<ul class="means">{mean_items}</ul><dl class="run">{items}</dl></header>'
    )


_COLUMNS: Sequence[tuple[str, str]] = (
    ("sample", "text"),
    ("outcome", "text"),
    ("composite", "num"),
    ("fact", "num"),
    ("behavior", "num"),
    ("judge", "num"),
    ("cost", "num"),
    ("latency", "num"),
)


def _table(samples: Sequence[Doc]) -> str:
    head = "".join(
        f'<th data-type="{kind}" aria-sort="none"><button type="button">{text(name)}</button></th>'
        for name, kind in _COLUMNS
    )
    outcomes = sorted({str(s.get("outcome")) for s in samples})
    options = '<option value="">all outcomes</option>' + "".join(
        f'<option value="{text(o)}">{text(o)}</option>' for o in outcomes
    )
    controls = (
        '<div class="controls"><input id="filter" type="search" placeholder="Filter by sample, file or variant" '
        f'aria-label="filter samples"><select id="outcome-filter" aria-label="outcome">{options}</select>'
        f'<span id="shown">{len(samples)} of {len(samples)} samples</span></div>'
    )
    body = "".join(_row(i, s) for i, s in enumerate(samples))
    return (
        f'<section class="samples"><h2>Samples</h2>{controls}<table id="samples"><thead><tr>{head}</tr></thead>'
        f'<tbody>{body}</tbody></table><p class="hint">Click a row (or press Enter on it) for its details.</p></section>'
    )


def _row(index: int, sample: Doc) -> str:
    scores: Doc = sample.get("scores") or {}
    cost, latency = sample_cost(sample), sample_latency(sample)
    name = display_name(sample)
    search = " ".join(str(sample.get(k) or "") for k in ("nodeid", "file", "variant")).lower()
    outcome = text(sample.get("outcome"))
    cells = [
        (text(name), name.lower(), f' title="{text(sample.get("nodeid", ""))}"'),
        (f'<span class="badge {outcome}">{outcome}</span>', outcome, ""),
        *((text(score_text(scores.get(layer))), _sort_num(scores.get(layer)), "") for layer in SCORE_COLUMNS),
        (text(money(cost)), _sort_num(cost), ""),
        (text(millis(latency)), _sort_num(latency), ""),
    ]
    # ``shown`` is escaped HTML already; sort keys are escaped here.
    tds = "".join(f'<td data-sort="{text(key)}"{extra}>{shown}</td>' for shown, key, extra in cells)
    return (
        f'<tr class="sample" tabindex="0" data-index="{index}" data-outcome="{outcome}" '
        f'data-search="{text(search)}" aria-controls="detail-{index}" aria-expanded="false">{tds}</tr>'
    )


def _sort_num(value: float | None) -> str:
    # Missing values sort below every real one.
    return "-1e308" if value is None else repr(float(value))
