"""Small inline SVG charts of the trend page: a sample's outcomes and composite, a layer's means.

Numbers only reach the SVG as formatted floats; every text (tooltips) goes through
:func:`pytest_omk.report.html.escape.text`. Each run's outcomes of one kind are one ``<path>`` (a
thousand runs stay a few kilobytes), with ``data-runs`` listing the runs it draws, for the tests.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_omk.models.history import LayerPoint, Mark
from pytest_omk.report.html.escape import text

_STEP = 4
"""Width of one run in a sample's sparklines, in SVG units."""
_HEIGHT = 14
_CHART_W, _CHART_H, _PAD = 520, 120, 20


def outcome_strip(marks: Sequence[Mark], first_run: int) -> str:
    """One bar per run coloured by outcome (pass, fail, skip; nothing where the sample was absent)."""
    width = max(len(marks) * _STEP, _STEP)
    paths = []
    for kind in ("pass", "fail", "skip"):
        runs = [i for i, mark in enumerate(marks) if mark == kind]
        if not runs:
            continue
        top, height = (0, _HEIGHT) if kind == "fail" else (4, _HEIGHT - 4)
        d = "".join(f"M{i * _STEP} {top}h{_STEP - 1}v{height}h-{_STEP - 1}z" for i in runs)
        numbers = " ".join(str(first_run + i) for i in runs)
        paths.append(
            f'<path class="mark {kind}" d="{d}" data-runs="{numbers}"><title>{kind}: runs {numbers}</title></path>'
        )
    return (
        f'<svg class="strip" viewBox="0 0 {width} {_HEIGHT}" width="{width}" height="{_HEIGHT}" role="img" '
        f'aria-label="outcome per run">{"".join(paths)}</svg>'
    )


def composite_line(values: Sequence[float | None]) -> str:
    """The composite per run as a line (1 at the bottom, 5 at the top); gaps where there is none."""
    width = max(len(values) * _STEP, _STEP)
    segments: list[list[str]] = [[]]
    for i, value in enumerate(values):
        if value is None:
            if segments[-1]:
                segments.append([])
            continue
        y = (_HEIGHT - 1) - (min(max(value, 1.0), 5.0) - 1.0) / 4.0 * (_HEIGHT - 2)
        segments[-1].append(f"{i * _STEP + _STEP / 2:.1f},{y:.1f}")
    lines = "".join(
        f'<polyline class="spark" points="{" ".join(points)}"></polyline>'
        if len(points) > 1
        else f'<circle class="spark" cx="{points[0].split(",")[0]}" cy="{points[0].split(",")[1]}" r="1.5"></circle>'
        for points in segments
        if points
    )
    return (
        f'<svg class="spark" viewBox="0 0 {width} {_HEIGHT}" width="{width}" height="{_HEIGHT}" role="img" '
        f'aria-label="composite per run">{lines}</svg>'
    )


def layer_chart(points: Sequence[LayerPoint]) -> str:
    """A layer's mean per run (dots) with each run's 95 % interval (a vertical line), on 1..5."""
    plot_w, plot_h = _CHART_W - 2 * _PAD, _CHART_H - 2 * _PAD
    step = plot_w / max(len(points) - 1, 1)

    def y(value: float) -> float:
        return _PAD + plot_h - (min(max(value, 1.0), 5.0) - 1.0) / 4.0 * plot_h

    parts = [
        f'<line class="axis" x1="{_PAD}" y1="{y(1):.1f}" x2="{_PAD + plot_w}" y2="{y(1):.1f}"></line>',
        f'<text x="2" y="{y(5) + 4:.1f}">5</text><text x="2" y="{y(1) + 4:.1f}">1</text>',
    ]
    for i, point in enumerate(points):
        if point.mean is None:
            continue
        x = _PAD + i * step
        tip = f"run {i + 1}: {point.mean:.2f}"
        if point.interval:
            low, high = point.interval
            tip += f" (95 % interval {low:.2f}–{high:.2f}, {point.samples} samples)"
            parts.append(
                f'<line class="interval" x1="{x:.1f}" y1="{y(low):.1f}" x2="{x:.1f}" y2="{y(high):.1f}"></line>'
            )
        parts.append(
            f'<circle class="point" cx="{x:.1f}" cy="{y(point.mean):.1f}" r="2.5" data-value="{point.mean:g}">'
            f"<title>{text(tip)}</title></circle>"
        )
    return (
        f'<svg class="layer" viewBox="0 0 {_CHART_W} {_CHART_H}" width="{_CHART_W}" height="{_CHART_H}" '
        f'role="img">{"".join(parts)}</svg>'
    )
