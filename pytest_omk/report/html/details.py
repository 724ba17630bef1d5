"""One sample's details panel: what it was asked, what it answered, and every reading with its reason."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_omk.report.html.escape import json_text, text
from pytest_omk.report.html.review import answer_change
from pytest_omk.report.view import Doc, millis, money, sample_cost, sample_latency, score_text


def sample_details(index: int, sample: Doc, variants: Sequence[Doc] = ()) -> str:
    """The hidden ``<section>`` a table row opens; ``variants``: the same sample's runs under each
    variant of an A/B run (this one included), shown side by side."""
    execution: Doc = sample.get("execution") or {}
    parts = [
        f'<section class="detail" id="detail-{index}" data-index="{index}" hidden>',
        f'<h3><span class="badge {text(sample.get("outcome"))}">{text(sample.get("outcome"))}</span> '
        f"{text(sample.get('nodeid', ''))}</h3>",
        _facts(sample, execution),
    ]
    if sample.get("error"):
        parts.append(f'<p class="error">{text(sample["error"])}</p>')
    if sample.get("prompt") is not None:
        parts.append(f'<h4>Prompt</h4><pre class="prompt">{text(sample["prompt"])}</pre>')
    if execution:
        parts.append(f'<h4>Output</h4><pre class="output">{text(execution.get("output", ""))}</pre>')
        parts.append(answer_change(sample))
    parts += [
        _assertions(sample.get("assertions") or []),
        _rubric(sample.get("rubric") or {}),
        _tool_calls(execution.get("toolCalls")),
        _mock_hits(execution.get("mockStats")),
        _urls(sample.get("urls") or []),
        _repeats(sample.get("repeats")),
        _side_by_side(variants),
        "</section>",
    ]
    return "".join(parts)


def _side_by_side(variants: Sequence[Doc]) -> str:
    """One column per variant: its outcome, composite, output and checks, in the run's order."""
    if len(variants) < 2:
        return ""
    columns = []
    for run in variants:
        outcome = text(run.get("outcome"))
        composite = score_text((run.get("scores") or {}).get("composite"))
        output = text((run.get("execution") or {}).get("output", ""))
        columns.append(
            f'<div class="variant-column" data-variant="{text(run.get("variant"))}">'
            f'<h4>{text(run.get("variant"))} <span class="badge {outcome}">{outcome}</span> '
            f'<span class="runs">composite {text(composite)}</span></h4>'
            f'<pre class="output">{output}</pre>{_assertions(run.get("assertions") or [])}</div>'
        )
    return f'<h4>Variants side by side</h4><div class="side-by-side">{"".join(columns)}</div>'


def readings_html(sample: Doc) -> str:
    """The output and every reading of a sample, for pages other than ours (pytest-html's extras)."""
    execution: Doc = sample.get("execution") or {}
    output = (
        f'<h4>Output</h4><pre class="output">{text(execution.get("output", ""))}</pre>' if execution else ""
    )
    error = f'<p class="error">{text(sample["error"])}</p>' if sample.get("error") else ""
    return error + output + _assertions(sample.get("assertions") or []) + _rubric(sample.get("rubric") or {})


def _facts(sample: Doc, execution: Doc) -> str:
    facts: list[tuple[str, Any]] = [
        ("file", sample.get("file")),
        ("variant", sample.get("variant")),
        ("executor", sample.get("executor")),
        ("model", sample.get("model")),
        ("cost", money(sample_cost(sample)) if sample_cost(sample) is not None else None),
        ("latency", millis(sample_latency(sample)) if sample_latency(sample) is not None else None),
        ("tokens in/out", _pair(execution.get("inputTokens"), execution.get("outputTokens"))),
        ("turns", execution.get("numTurns")),
        ("retries", execution.get("retries")),
        ("replayed", None if not execution else ("yes" if execution.get("replayed") else "no")),
    ]
    metadata: Mapping[str, Any] = sample.get("metadata") or {}
    facts += [(str(key), ", ".join(map(str, v)) if isinstance(v, list) else v) for key, v in metadata.items()]
    items = "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in facts if v is not None and v != "")
    return f'<dl class="facts">{items}</dl>'


def _pair(first: Any, second: Any) -> str | None:
    return (
        None
        if first is None and second is None
        else f"{first if first is not None else '-'} / {second if second is not None else '-'}"
    )


def _table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], css: str) -> str:
    """A details table; cells are already escaped HTML."""
    if not rows:
        return ""
    head = "".join(f"<th>{text(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<h4>{text(title)}</h4><table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _status(status: Any) -> str:
    return f'<span class="status {text(status)}">{text(status)}</span>'


def _tally(runs: Doc | None) -> str:
    return (
        ""
        if not runs
        else f' <span class="runs">({runs["pass"]} pass, {runs["fail"]} fail, {runs["missing"]} missing)</span>'
    )


def _assertions(assertions: Sequence[Doc]) -> str:
    rows = [
        [
            text(a["index"]),
            text(a["type"]),
            text(a.get("layer") or "-"),
            text(f"{a['weight']:g}"),
            _status(a["status"]) + _tally(a.get("runs")),
            text(a.get("message", "")),
        ]
        for a in assertions
    ]
    return _table(
        "Assertions", ["#", "type", "layer", "weight", "status", "reason"], rows, "readings assertions"
    )


def _rubric(rubric: Mapping[str, Doc]) -> str:
    rows = [
        [
            text(name),
            text(score_text(r.get("score"))),
            text(f"{r['weight']:g}"),
            _status(r["status"]) + _tally(r.get("runs")),
            text(r.get("reason", "")),
        ]
        for name, r in rubric.items()
    ]
    return _table(
        "Rubric", ["dimension", "score", "weight", "status", "judge's reason"], rows, "readings rubric"
    )


def _tool_calls(calls: Sequence[Doc] | None) -> str:
    rows = [
        [
            text(i),
            text(call.get("tool", "")),
            json_text(call.get("input")),
            text(_success(call.get("success"))),
            json_text(call.get("output"), 400),
        ]
        for i, call in enumerate(calls or [])
    ]
    return _table("Tool trace", ["#", "tool", "input", "result", "output"], rows, "readings tools")


def _success(success: Any) -> str:
    return "-" if success is None else "ok" if success else "failed"


def _mock_hits(stats: Any) -> str:
    if not stats:
        return ""
    return f'<h4>Mock hits</h4><pre class="mocks">{json_text(stats, 4000)}</pre>'


def _urls(urls: Sequence[Doc]) -> str:
    rows = [
        [
            text(u.get("url", "")),
            text(u.get("via", "")),
            text(u.get("bytes", "")),
            text(u.get("sha256", ""))[:16],
        ]
        for u in urls
    ]
    return _table("Resolved URLs", ["url", "via", "bytes", "sha256"], rows, "readings urls")


def _repeats(repeats: Doc | None) -> str:
    if not repeats:
        return ""
    rows = [
        [
            text(run["repeat"]),
            _status("pass" if run["passed"] else "fail"),
            text(score_text((run.get("scores") or {}).get("composite"))),
            text("yes" if run.get("replayed") else "no"),
        ]
        for run in repeats.get("runs") or []
    ]
    summary = f"{repeats['passed']} of {repeats['n']} runs passed (pass rate {repeats['passRate']:.0%})"
    return f"<p>{text(summary)}</p>" + _table(
        "Runs", ["run", "outcome", "composite", "replayed"], rows, "readings runs"
    )
