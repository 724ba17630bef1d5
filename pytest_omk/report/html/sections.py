"""Which charts a report gets, and their data, read from the JSON report document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_omk.report.html.charts import (
    Bar,
    Interval,
    column_chart,
    figure,
    grouped_hbar_chart,
    hbar_chart,
    interval_chart,
)
from pytest_omk.report.view import SCORE_COLUMNS, Doc, display_name, score_text

BIN_WIDTH = 0.5
BIN_LOW = 1.0
BIN_COUNT = 8
"""Score distributions use eight half-point bins over 1-5, the scores' range (the last includes 5)."""


def distribution_charts(samples: Sequence[Doc]) -> list[str]:
    """One histogram per score layer that has at least one score (composite first)."""
    charts = []
    for layer in SCORE_COLUMNS:
        values = [s["scores"][layer] for s in samples if (s.get("scores") or {}).get(layer) is not None]
        if not values:
            continue
        counts = [0] * BIN_COUNT
        for value in values:
            counts[min(int(max(value - BIN_LOW, 0.0) / BIN_WIDTH), BIN_COUNT - 1)] += 1
        bars = [
            Bar(
                f"{BIN_LOW + i * BIN_WIDTH:g}–{BIN_LOW + (i + 1) * BIN_WIDTH:g}",
                count,
                str(count),
                _score_tone(BIN_LOW + (i + 0.5) * BIN_WIDTH),
            )
            for i, count in enumerate(counts)
        ]
        title = f"{layer.capitalize()} score distribution ({len(values)} samples)"
        charts.append(figure(f"dist-{layer}", title, column_chart(bars, max(counts))))
    return charts


def coverage_charts(coverage: Doc | None) -> list[str]:
    """Pass rate and mean composite per capability and per difficulty (per variant when there are several)."""
    charts: list[str] = []
    for dimension in ("capability", "difficulty"):
        rows: list[Doc] = list((coverage or {}).get(dimension) or [])
        if not rows:
            continue
        labels = [str(r["name"]) + (f" · {r['variant']}" if r.get("variant") else "") for r in rows]
        passes = [
            Bar(label, r["passRate"] or 0.0, _percent(r["passRate"]), _rate_tone(r["passRate"]))
            for label, r in zip(labels, rows, strict=True)
        ]
        means = [
            Bar(label, r["composite"] or 0.0, score_text(r["composite"]), _score_tone(r["composite"]))
            for label, r in zip(labels, rows, strict=True)
        ]
        charts.append(figure(f"{dimension}-pass-rate", f"Pass rate by {dimension}", hbar_chart(passes, 1.0)))
        charts.append(
            figure(f"{dimension}-composite", f"Mean composite by {dimension}", hbar_chart(means, 5.0))
        )
    return charts


def variant_charts(variants: Sequence[Doc], comparisons: Sequence[Doc]) -> list[str]:
    """Each variant's layer means side by side, then each paired difference with its interval."""
    if not variants:
        return []
    # One group per layer that any variant has, one bar per variant in it (in the variants' order),
    # so the variants are compared where they differ: layer by layer.
    groups = [
        (
            layer,
            [
                Bar(
                    f"{v['name']} · {layer}",
                    v["means"].get(layer) or 0.0,
                    score_text(v["means"].get(layer)),
                    _score_tone(v["means"].get(layer)),
                    key=str(v["name"]),
                )
                for v in variants
            ],
        )
        for layer in SCORE_COLUMNS
        if any(v["means"].get(layer) is not None for v in variants)
    ]
    charts = [figure("variant-means", "Mean score per layer and variant", grouped_hbar_chart(groups, 5.0))]
    rows = [
        Interval(
            f"{c['variant']} − {c['reference']}",
            c["meanDifference"],
            c["interval"]["low"],
            c["interval"]["high"],
            f"{c['meanDifference']:+.2f} [{c['interval']['low']:+.2f}, {c['interval']['high']:+.2f}]",
        )
        for c in comparisons
        if c.get("meanDifference") is not None and c.get("interval")
    ]
    if rows:
        note = "; ".join(
            f"{c['variant']}: {c['verdict']} ({c['pairs']} pairs)" for c in comparisons if c.get("verdict")
        )
        title = f"Paired difference in {comparisons[0].get('metric', 'composite')} with its interval"
        charts.append(figure("variant-difference", title, interval_chart(rows), note))
    return charts


def repeat_charts(samples: Sequence[Doc]) -> list[str]:
    """Per-sample pass rate over its repeats, with pass^k (every run passed) in the note."""
    repeated = [s for s in samples if s.get("repeats")]
    if not repeated:
        return []
    bars = [
        Bar(
            display_name(s),
            s["repeats"]["passRate"],
            f"{s['repeats']['passed']}/{s['repeats']['n']}",
            "pass" if s["repeats"]["passAll"] else _rate_tone(s["repeats"]["passRate"]),
        )
        for s in repeated
    ]
    every = sum(1 for s in repeated if s["repeats"]["passAll"])
    auto = [s["repeats"]["auto"] for s in repeated if s["repeats"].get("auto")]
    if auto:
        # --omk-repeat auto: each sample took its own number of runs, up to the maximum.
        runs = sum(s["repeats"]["n"] for s in repeated)
        most = sum(a["max"] for a in auto)
        note = f"every run passed: {every} of {len(repeated)} samples; {runs} runs of {most} at most ({most - runs} saved)"
        title = f"Pass rate over each sample's runs (--omk-repeat auto, at most {auto[0]['max']})"
        return [figure("repeat-pass-rate", title, hbar_chart(bars, 1.0), note)]
    k = repeated[0]["repeats"]["n"]
    note = f"pass^{k} (every run passed): {every} of {len(repeated)} samples"
    return [figure("repeat-pass-rate", f"Pass rate over {k} runs per sample", hbar_chart(bars, 1.0), note)]


def baseline_charts(baseline: Doc | None) -> list[str]:
    """Each layer mean's change against the baseline (red when it dropped)."""
    if not baseline:
        return []
    bars: list[Bar] = []
    for group in baseline.get("layers") or []:
        suffix = f" · {group['variant']}" if group.get("variant") else ""
        for layer, stats in group["layers"].items():
            delta = stats.get("delta")
            if delta is not None and layer in SCORE_COLUMNS:
                bars.append(Bar(layer + suffix, abs(delta), f"{delta:+.2f}", "fail" if delta < 0 else "pass"))
    if not bars:
        return []
    scale = max([b.value for b in bars] + [0.5])
    note = f"{baseline.get('matched', 0)} samples matched, {baseline.get('new', 0)} new, {baseline.get('notRun', 0)} not run"
    return [
        figure(
            "baseline-delta",
            f"Change in layer means against {baseline.get('path', 'the baseline')}",
            hbar_chart(bars, scale),
            note,
        )
    ]


def mutation_charts(samples: Sequence[Doc]) -> list[str]:
    """``--omk-mutate``: per assessed sample, the share of mutants its checks caught (weak ones red)."""
    assessed = [s for s in samples if (s.get("mutation") or {}).get("assessed")]
    if not assessed:
        return []
    bars = [
        Bar(
            display_name(s),
            s["mutation"]["caught"] / max(1, s["mutation"]["mutants"]),
            f"{s['mutation']['caught']}/{s['mutation']['mutants']}"
            + (" weak" if s["mutation"]["weak"] else ""),
            "fail"
            if s["mutation"]["weak"]
            else _rate_tone(s["mutation"]["caught"] / max(1, s["mutation"]["mutants"])),
        )
        for s in assessed
    ]
    weak = [display_name(s) for s in assessed if s["mutation"]["weak"]]
    note = (
        f"weak (checks pass every mutant): {', '.join(weak)}"
        if weak
        else "no weak sample: every sample's checks caught a mutant"
    )
    return [
        figure(
            "mutation", "Mutation: wrong answers caught by each sample's checks", hbar_chart(bars, 1.0), note
        )
    ]


def all_charts(document: Doc) -> list[str]:
    """Every chart the document has data for, in reading order."""
    samples: list[Any] = list(document.get("samples") or [])
    return [
        *distribution_charts(samples),
        *coverage_charts(document.get("coverage")),
        *variant_charts(document.get("variants") or [], document.get("comparisons") or []),
        *repeat_charts(samples),
        *baseline_charts(document.get("baseline")),
        *mutation_charts(samples),
    ]


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"


def _score_tone(score: float | None) -> str:
    if score is None:
        return ""
    return "pass" if score >= 4 else "warn" if score >= 3 else "fail"


def _rate_tone(rate: float | None) -> str:
    if rate is None:
        return ""
    return "pass" if rate >= 0.9 else "warn" if rate >= 0.5 else "fail"
