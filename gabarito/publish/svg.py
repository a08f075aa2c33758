"""The figures of the pages ``gabarito evaluate`` and ``gabarito compare`` write, drawn as inline SVG.

The site's figures are plotly (:mod:`gabarito.publish.charts`); a page that a user opens from disk
would have to carry plotly.js (4.8 MB) for two small charts, so these two are drawn here as SVG
with no script: the same data, colours (:func:`gabarito.publish.palette.method_color`), labels and
Brazilian numbers (:mod:`gabarito.publish.formatting`). Each figure scales with its column
(``viewBox``) and names each mark in a ``<title>`` (shown on hover, read by screen readers).
"""

from __future__ import annotations

import html
import math
from typing import Mapping, Sequence

import numpy as np

from gabarito.measure.report import Report, as_report
from gabarito.publish.palette import PALETTE, method_color
from gabarito.publish.formatting import Html, estimate, num
from gabarito.publish.labels import measure_label, method

#: Width of every figure in SVG units; the figure is drawn at most :data:`MAX_WIDTH` wide.
WIDTH = 400
MAX_WIDTH = "34rem"
INK = "#1F2937"
GRID = "#E5E7EB"
MUTED = "#475569"
FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, Arial, sans-serif"'


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _text(x: float, y: float, label: str, *, size: int = 11, anchor: str = "start", fill: str = INK,
          extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{extra}>'
            f"{_e(label)}</text>")


def _figure(height: float, parts: Sequence[str], label: str) -> Html:
    """The ``<svg>`` in a ``<figure>``, as wide as its column up to :data:`MAX_WIDTH`."""
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0f}" role="img" '
           f'aria-label="{_e(label)}" {FONT} style="width:100%;max-width:{MAX_WIDTH};height:auto;display:block">'
           + "".join(parts) + "</svg>")
    return Html(f'<figure class="gabarito-svg">{svg}</figure>')


def _legend(y: float, entries: Sequence[tuple[str, str]]) -> tuple[list[str], float]:
    """Colour keys under the plot, wrapped to the width; returns the parts and the height used."""
    parts, x, row = [], 8.0, 0
    for name, color in entries:
        width = 22 + 6.2 * len(name)
        if x + width > WIDTH - 8 and x > 8:
            x, row = 8.0, row + 1
        top = y + 18 * row
        parts += [f'<rect x="{x:.1f}" y="{top:.1f}" width="12" height="12" fill="{color}"/>',
                  _text(x + 16, top + 10.5, name, size=11)]
        x += width
    return parts, 18.0 * (row + 1)


def ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values from ``lo`` to ``hi`` (steps of 1, 2 or 5 times a power of ten)."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9)
    return [round(k * step, 10) for k in range(first, math.floor(hi / step + 1e-9) + 1)]


def _decimals(values: Sequence[float]) -> int:
    """Digits after the comma that tell the ticks apart."""
    for digits in range(0, 4):
        if len({round(v, digits) for v in values}) == len(values):
            return digits
    return 3


def metrics_bars(report: Report | Mapping, methods: Sequence[str], measures: Sequence[str], *,
                 labels: Mapping[str, str] | None = None,
                 axis_note: str = "0 = nunca acerta · 1 = sempre acerta") -> Html:
    """Grouped horizontal bars, one group per measure and one bar per method, with the 95%
    interval as a whisker and the value written inside the bar (the chart of
    :func:`gabarito.publish.charts.metrics_bars`); ``axis_note`` reads the scale under the axis
    (the default fits accuracies only). ``report``: a :class:`~gabarito.measure.report.Report`, or
    a written block of one."""
    report = as_report(report)
    left, right, top, bar, gap = 78.0, WIDTH - 14.0, 8.0, 16.0, 10.0
    span = right - left

    def x(value: float) -> float:
        return left + span * max(0.0, min(value, 1.02)) / 1.02

    names = [(labels or {}).get(key) or method(key) for key in methods]
    group = bar * len(methods)
    plot_h = len(measures) * (group + gap)
    parts = [f'<line x1="{x(t):.1f}" y1="{top}" x2="{x(t):.1f}" y2="{top + plot_h:.1f}" stroke="{GRID}"/>'
             + _text(x(t), top + plot_h + 14, num(t, 1), size=10, anchor="middle", fill=MUTED)
             for t in ticks(0.0, 1.0)]
    for j, measure in enumerate(measures):
        y0 = top + j * (group + gap) + gap / 2
        parts.append(_text(left - 6, y0 + group / 2 + 4, measure_label(measure), anchor="end"))
        for i, key in enumerate(methods):
            value = report.mean(key, measure)
            lo, hi = report.interval(key, measure)
            y = y0 + i * bar
            mid = y + (bar - 2) / 2
            tip = f"{names[i]}, {measure_label(measure)}: {estimate(value, (lo, hi))}"
            parts.append(
                f'<g><title>{_e(tip)}</title>'
                f'<rect x="{left:.1f}" y="{y:.1f}" width="{x(value) - left:.1f}" height="{bar - 2:.1f}" '
                f'fill="{method_color(key, i)}"/>'
                f'<path d="M{x(lo):.1f} {mid:.1f}H{x(hi):.1f}M{x(lo):.1f} {mid - 3:.1f}V{mid + 3:.1f}'
                f'M{x(hi):.1f} {mid - 3:.1f}V{mid + 3:.1f}" stroke="{INK}" stroke-width="1.2" fill="none"/>'
                + _text(left + 4, mid + 3.8, num(value), size=10, fill="#fff" if value >= 0.12 else INK,
                        extra="" if value >= 0.12 else f' dx="{x(value) - left:.1f}"')
                + "</g>")
    axis_y = top + plot_h + 30
    parts.append(_text(left + span / 2, axis_y, axis_note, size=11, anchor="middle", fill=MUTED))
    legend, used = _legend(axis_y + 12, [(n, method_color(k, i)) for i, (k, n) in enumerate(zip(methods, names))])
    label = "Média de cada medida, com o intervalo de 95%: " + ", ".join(names)
    return _figure(axis_y + 16 + used, parts + legend, label)


def score_boxes(groups: Sequence[tuple[str, Sequence[float], Sequence[float]]], *, score_title: str) -> Html:
    """Two boxes per group, the scores of the questions with an answer and of those without,
    every question drawn as a dot beside its box (the chart of
    :func:`gabarito.publish.charts.score_boxes`)."""
    kinds = (("com resposta", PALETTE[0]), ("sem resposta", PALETTE[1]))
    values = [v for _, a, u in groups for v in (*a, *u)]
    scale = ticks(min(values, default=0.0), max(values, default=1.0))
    lo, hi = min(scale[0], *values), max(scale[-1], *values)
    left, right, top, plot_h = 52.0, WIDTH - 10.0, 10.0, 230.0

    def y(value: float) -> float:
        return top + plot_h - plot_h * (value - lo) / ((hi - lo) or 1.0)

    digits = _decimals(scale)
    parts = [f'<line x1="{left}" y1="{y(t):.1f}" x2="{right}" y2="{y(t):.1f}" stroke="{GRID}"/>'
             + _text(left - 5, y(t) + 3.5, num(t, digits), size=10, anchor="end", fill=MUTED) for t in scale]
    parts.append(_text(12, top + plot_h / 2, score_title, size=11, anchor="middle", fill=MUTED,
                       extra=f' transform="rotate(-90 12 {top + plot_h / 2:.1f})"'))
    slot = (right - left) / max(len(groups), 1)
    for g, (name, *series) in enumerate(groups):
        parts.append(_text(left + slot * (g + 0.5), top + plot_h + 16, name, anchor="middle"))
        for k, ((kind, color), vals) in enumerate(zip(kinds, series)):
            if not vals:
                continue
            centre = left + slot * g + slot * (0.3 + 0.4 * k)
            half = min(slot * 0.12, 28.0)
            q1, med, q3 = (float(q) for q in np.percentile(vals, [25, 50, 75]))
            tip = (f"{name}, {kind}: {len(vals)} perguntas; mediana {num(med, 3)}, quartis {num(q1, 3)} e "
                   f"{num(q3, 3)}; de {num(min(vals), 3)} a {num(max(vals), 3)}")
            box = (f'<g><title>{_e(tip)}</title>'
                   f'<path d="M{centre:.1f} {y(min(vals)):.1f}V{y(q1):.1f}M{centre:.1f} {y(q3):.1f}'
                   f'V{y(max(vals)):.1f}" stroke="{color}" stroke-width="1.2"/>'
                   f'<rect x="{centre - half:.1f}" y="{y(q3):.1f}" width="{2 * half:.1f}" '
                   f'height="{max(y(q1) - y(q3), 1):.1f}" fill="{color}" fill-opacity=".25" stroke="{color}"/>'
                   f'<path d="M{centre - half:.1f} {y(med):.1f}H{centre + half:.1f}" stroke="{color}" '
                   f'stroke-width="2"/></g>')
            dots = "".join(  # spread over the box's width in a fixed pattern: no random jitter
                f'<circle cx="{centre - half + 2 * half * ((i * 0.618) % 1):.1f}" cy="{y(v):.1f}" r="2.2" '
                f'fill="{color}" fill-opacity=".7"><title>{_e(f"{kind}: {num(v, 3)}")}</title></circle>'
                for i, v in enumerate(vals))
            parts += [box, dots]
    legend, used = _legend(top + plot_h + 28, list(kinds))
    return _figure(top + plot_h + 32 + used, parts + legend, f"{score_title}: perguntas com e sem resposta")
