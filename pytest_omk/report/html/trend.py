"""The trend page (``render --history --html PATH``): one self-contained file, no script.

It has the report page's Content-Security-Policy (:mod:`pytest_omk.report.html.policy`: nothing but
its own inline style loads) and escaper (:func:`pytest_omk.report.html.escape.text`, for every
string a report holds: node ids, variants, paths, digests, times). Charts are inline SVG.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources

from pytest_omk.models.history import LAYERS, SampleTrend, Sliding, TrendDocument, TrendRun
from pytest_omk.report.history_view import (
    presence_text,
    run_span,
    sample_name,
    set_line,
    state_text,
    summary_counts,
)
from pytest_omk.report.html.charts import figure
from pytest_omk.report.html.escape import text
from pytest_omk.report.html.policy import content_security_policy
from pytest_omk.report.html.sparkline import composite_line, layer_chart, outcome_strip

SPARK_RUNS = 100
"""Runs drawn per sample (the latest); the JSON has every run."""


def _style() -> str:
    folder = resources.files(__package__)
    return "".join(folder.joinpath(name).read_text(encoding="utf-8") for name in ("report.css", "trend.css"))


def render_trend_html(trend: TrendDocument) -> str:
    """The whole trend page."""
    style = _style()
    title = f"pytest-omk trend: {len(trend.runs)} runs, {len(trend.samples)} samples"
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(style)}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{text(title)}</title><style>{style}</style></head><body>",
            f"<header><h1>{text(title)}</h1><p>{text(summary_counts(trend))}</p>{_facts(trend)}</header>",
            _layers(trend),
            _sets(trend),
            _samples(trend),
            _runs(trend.runs),
            "</body></html>\n",
        ]
    )


def _facts(trend: TrendDocument) -> str:
    runs = trend.runs
    facts = [
        ("first run", runs[0].startedAt if runs else "-"),
        ("last run", runs[-1].startedAt if runs else "-"),
        ("sliding window", f"last {trend.window} runs against the {trend.window} before"),
        ("sample sets", str(len(trend.sampleSets))),
    ]
    items = "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in facts)
    return f'<dl class="run">{items}</dl>'


def _slide_note(slide: Sliding | None) -> str:
    if slide is None:
        return "too few runs to compare windows"
    interval = f" [{slide.interval[0]:+.2f}, {slide.interval[1]:+.2f}]" if slide.interval else ""
    difference = "-" if slide.meanDifference is None else f"{slide.meanDifference:+.2f}"
    note = (
        f"{run_span(slide.recentRuns)} against {run_span(slide.previousRuns)}: {difference}{interval} "
        f"over {slide.pairs} samples"
    )
    note += ": SLIDING" if slide.sliding else ""
    return note + (" (across sample sets: shared samples only)" if slide.acrossSampleSets else "")


def _layers(trend: TrendDocument) -> str:
    slides = {s.layer: s for s in trend.sliding}
    figures = []
    for layer in LAYERS:
        points = [run.layers[layer] for run in trend.runs]
        if all(point.mean is None for point in points):
            continue
        slide = slides.get(layer)
        chart = figure(
            f"layer-{layer}",
            f"{layer}: mean per run (95 % interval)",
            layer_chart(points),
            _slide_note(slide),
        )
        if slide is not None and slide.sliding:
            chart = chart.replace(
                '<figure class="chart"', '<figure class="chart sliding" data-sliding="true"', 1
            )
        figures.append(chart)
    return f'<section class="charts"><h2>Layers</h2>{"".join(figures)}</section>' if figures else ""


def _sets(trend: TrendDocument) -> str:
    if len(trend.sampleSets) < 2:
        return ""
    items = "".join(f'<li data-set="{s.index}">{set_line(s, 50, text)}</li>' for s in trend.sampleSets)
    return (
        '<section class="sets"><h2>Sample sets</h2><p class="flag">These runs ran different sample sets '
        f"(their collection digests differ); each run says which.</p><ul>{items}</ul></section>"
    )


def _samples(trend: TrendDocument) -> str:
    runs = len(trend.runs)
    first = max(runs - SPARK_RUNS, 0) + 1
    note = f" (runs {first}-{runs})" if runs > SPARK_RUNS else ""
    rows = "".join(_sample_row(s, first, runs) for s in trend.samples)
    return (
        f'<section class="samples"><h2>Samples</h2><table id="trend-samples"><thead><tr><th>sample</th>'
        f"<th>state</th><th>outcome per run{note}</th><th>composite per run{note}</th><th>in runs</th>"
        f"</tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _sample_row(sample: SampleTrend, first: int, runs: int) -> str:
    slug = sample.state.replace(" ", "-")
    present = "-" if sample.firstRun is None else f"{sample.firstRun}-{sample.lastRun}"
    changed = presence_text(sample, runs)
    present += f" ({changed})" if changed else ""
    full = sample.nodeid if sample.variant is None else f"{sample.nodeid} [{sample.variant}]"
    return (
        f'<tr class="trend-sample" data-state="{text(sample.state)}" data-since="{sample.since or ""}">'
        f'<td title="{text(full)}">{text(sample_name(sample))}</td>'
        f'<td><span class="state {slug}">{text(state_text(sample))}</span></td>'
        f"<td>{outcome_strip(sample.outcomes[first - 1 :], first)}</td>"
        f"<td>{composite_line(sample.composite[first - 1 :])}</td><td>{text(present)}</td></tr>"
    )


def _runs(runs: Sequence[TrendRun]) -> str:
    rows = "".join(
        f'<tr data-run="{run.index}" data-set="{run.sampleSet}"><td>{run.index}</td><td>{text(run.startedAt)}</td>'
        f"<td>{text(run.path)}</td><td>{run.sampleSet}</td><td>{run.samples}</td>"
        f"<td>{text(', '.join(f'{n} {o}' for o, n in run.outcomes.items()))}</td></tr>"
        for run in runs
    )
    return (
        '<section class="runs"><h2>Runs</h2><table id="trend-runs"><thead><tr><th>run</th><th>started</th>'
        f"<th>report</th><th>sample set</th><th>samples</th><th>outcomes</th></tr></thead><tbody>{rows}</tbody>"
        "</table></section>"
    )
