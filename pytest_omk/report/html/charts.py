"""Bar charts drawn as inline SVG (no script, no external library, no network).

Every bar is a ``<rect class="bar">`` with its value in ``data-value`` and a ``<title>`` tooltip, so
the page's tests can count bars per chart and a reader can hover for exact numbers. All text is
escaped here; callers pass plain strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

_WIDTH = 520
_LABEL_W = 170
_ROW_H = 22
_PLOT_H = 120
_TOP = 16


@dataclass(frozen=True)
class Bar:
    """One bar: its label, its value (drawn against the chart's scale) and the text shown beside it."""

    label: str
    value: float
    text: str
    tone: str = ""
    """An extra CSS class (``pass``, ``fail``, ``warn``) for the bar's colour."""
    key: str = ""
    """What the bar stands for within its group (a variant's name), as ``data-variant``."""


@dataclass(frozen=True)
class Interval:
    """A point estimate with its interval (a paired difference and its bootstrap interval)."""

    label: str
    value: float
    low: float
    high: float
    text: str


def figure(chart_id: str, title: str, svg: str, note: str = "") -> str:
    """A titled ``<figure>`` around a chart; ``data-chart`` names it for tests and styling."""
    caption = f"<figcaption>{escape(title)}</figcaption>"
    extra = f'<p class="note">{escape(note)}</p>' if note else ""
    return f'<figure class="chart" data-chart="{escape(chart_id)}">{caption}{svg}{extra}</figure>'


def _bar_rect(x: float, y: float, w: float, h: float, bar: Bar) -> str:
    tone = f" {bar.tone}" if bar.tone else ""
    return (
        f'<rect class="bar{tone}" x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{max(h, 0):.1f}" '
        f'data-value="{bar.value:g}"{_key_attribute(bar)}><title>{escape(bar.label)}: {escape(bar.text)}</title></rect>'
    )


def _key_attribute(bar: Bar) -> str:
    return f' data-variant="{escape(bar.key)}"' if bar.key else ""


def hbar_chart(bars: Sequence[Bar], scale_max: float) -> str:
    """Horizontal bars, one labelled row each, scaled so ``scale_max`` fills the plot."""
    plot_w = _WIDTH - _LABEL_W - 60
    height = _ROW_H * len(bars) + 8
    parts = [
        f'<svg class="hbar" viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" height="{height}" role="img">'
    ]
    for row, bar in enumerate(bars):
        y = 4 + row * _ROW_H
        share = 0.0 if scale_max <= 0 else min(max(bar.value / scale_max, 0.0), 1.0)
        parts.append(
            f'<text class="label" x="{_LABEL_W - 6}" y="{y + 15}" text-anchor="end">{escape(_short(bar.label))}</text>'
        )
        parts.append(_bar_rect(_LABEL_W, y + 3, share * plot_w, _ROW_H - 6, bar))
        parts.append(
            f'<text class="value" x="{_LABEL_W + share * plot_w + 4:.1f}" y="{y + 15}">{escape(bar.text)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def grouped_hbar_chart(groups: Sequence[tuple[str, Sequence[Bar]]], scale_max: float) -> str:
    """Horizontal bars in labelled groups (``<g class="layer-group" data-layer>``), one row per bar
    labelled by its ``key``, groups apart by half a row."""
    plot_w = _WIDTH - _LABEL_W - 60
    rows = sum(len(bars) + 1 for _, bars in groups)
    height = _ROW_H * rows + 8
    parts = [
        f'<svg class="hbar grouped" viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" height="{height}" role="img">'
    ]
    y = 4
    for name, bars in groups:
        parts.append(f'<g class="layer-group" data-layer="{escape(name)}">')
        parts.append(f'<text class="group" x="4" y="{y + 15}">{escape(name)}</text>')
        y += _ROW_H
        for bar in bars:
            share = 0.0 if scale_max <= 0 else min(max(bar.value / scale_max, 0.0), 1.0)
            label = f'<text class="label" x="{_LABEL_W - 6}" y="{y + 15}" text-anchor="end">{escape(_short(bar.key))}</text>'
            value = f'<text class="value" x="{_LABEL_W + share * plot_w + 4:.1f}" y="{y + 15}">{escape(bar.text)}</text>'
            parts += [label, _bar_rect(_LABEL_W, y + 3, share * plot_w, _ROW_H - 6, bar), value]
            y += _ROW_H
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def column_chart(bars: Sequence[Bar], scale_max: float) -> str:
    """Vertical columns with their labels below (histograms); the count is printed above each."""
    slot = (_WIDTH - 40) / max(len(bars), 1)
    height = _TOP + _PLOT_H + 30
    base = _TOP + _PLOT_H
    parts = [
        f'<svg class="columns" viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" height="{height}" role="img">'
    ]
    parts.append(f'<line class="axis" x1="20" y1="{base}" x2="{_WIDTH - 20}" y2="{base}"/>')
    for index, bar in enumerate(bars):
        x = 20 + index * slot
        share = 0.0 if scale_max <= 0 else min(max(bar.value / scale_max, 0.0), 1.0)
        h = share * _PLOT_H
        parts.append(_bar_rect(x + 3, base - h, slot - 6, h, bar))
        centre = f'x="{x + slot / 2:.1f}" text-anchor="middle"'
        if bar.value:
            parts.append(f'<text class="value" {centre} y="{base - h - 4:.1f}">{escape(bar.text)}</text>')
        parts.append(f'<text class="label" {centre} y="{base + 16}">{escape(bar.label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def interval_chart(rows: Sequence[Interval]) -> str:
    """A forest plot: each interval as a thin bar, the estimate as a dot, zero as a dashed line."""
    plot_w = _WIDTH - _LABEL_W - 150  # room on the right for "+0.33 [-0.13, +0.75]"
    bound = max([abs(v) for r in rows for v in (r.low, r.high, r.value)] + [0.5])

    def x_of(value: float) -> float:
        return _LABEL_W + (value + bound) / (2 * bound) * plot_w

    height = _ROW_H * len(rows) + 24
    parts = [
        f'<svg class="intervals" viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" height="{height}" role="img">'
    ]
    parts.append(f'<line class="zero" x1="{x_of(0):.1f}" y1="0" x2="{x_of(0):.1f}" y2="{height - 16}"/>')
    parts.append(f'<text class="label" x="{x_of(0):.1f}" y="{height - 4}" text-anchor="middle">0</text>')
    for row, item in enumerate(rows):
        y = 4 + row * _ROW_H
        bar = Bar(
            item.label, item.value, item.text, "pass" if item.low > 0 else "fail" if item.high < 0 else ""
        )
        parts.append(
            f'<text class="label" x="{_LABEL_W - 6}" y="{y + 15}" text-anchor="end">{escape(_short(item.label))}</text>'
        )
        parts.append(_bar_rect(x_of(item.low), y + 8, x_of(item.high) - x_of(item.low), 6, bar))
        parts.append(f'<circle class="point" cx="{x_of(item.value):.1f}" cy="{y + 11}" r="4"/>')
        parts.append(
            f'<text class="value" x="{_LABEL_W + plot_w + 6}" y="{y + 15}">{escape(item.text)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _short(label: str) -> str:
    """Labels are cut so they stay inside the label column (the tooltip keeps the whole text)."""
    return label if len(label) <= 28 else label[:27] + "…"
