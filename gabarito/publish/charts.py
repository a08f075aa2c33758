"""Figures of the pages (plotly), built from results dictionaries; no numbers of their own.

Every figure uses the site's template (:func:`gabarito.publish.plots.setup_plotly`): decimal
comma and thousands dot on the axes (``separators=",."``), a white background, the legend
under the plot so that nothing covers it, and no toolbar. A method's colour comes from its identity
(:mod:`gabarito.publish.palette`, the book's one palette), anything else's from ``PALETTE`` in order.
"""

from __future__ import annotations

import html
from typing import Mapping, Sequence

from gabarito.publish.formatting import integer, num
from gabarito.publish.labels import measure_label, method, term
from gabarito.publish.palette import PALETTE, method_color  # noqa: F401 - the pages' charts.PALETTE
from gabarito.measure.report import Report, as_report
from gabarito.measure.stats import ALPHA

#: The legend, under the plot area.
LEGEND = dict(orientation="h", yanchor="top", y=-0.22, x=0, xanchor="left", title_text="")

#: The longest line of a legend entry or a menu's label: longer ones wrap, so that on a 390-px phone
#: neither runs out of the chart's box.
LINE = 34


#: The x axis of a weight from 0 to 1 on a plot whose y axis also starts at 0: a little room each
#: side, so that the two axes' "0" do not meet in the corner.
WEIGHT_RANGE = (-0.03, 1.03)

#: The most categories whose bars stand side by side (:func:`grouped_bars`); more lie down.
STANDING = 6

#: The longest line of a model's name beside a box plot's rows (the plot keeps most of a phone's width).
BOX_LABEL = 16


def wrap(label: str, width: int = LINE) -> str:
    """``label`` in lines of at most ``width`` characters joined by plotly's ``<br>`` (a label that
    already has a ``<br>`` is left as it is)."""
    import textwrap

    if "<br>" in label or len(label) <= width:
        return label
    return "<br>".join(textwrap.wrap(label, width, break_long_words=False, break_on_hyphens=False))


def layout(fig, **kw):
    """The site's layout: margins that leave room for labels, the legend under the plot (its long
    entries wrapped, :func:`wrap`). The site's script moves a legend under the plot further down
    where the x axis's labels and title would reach it (``gabarito.js``)."""
    kw.setdefault("legend", LEGEND)
    fig.update_layout(margin=dict(l=10, r=16, t=40, b=10), **kw)
    for trace in fig.data:
        if isinstance(getattr(trace, "name", None), str):
            trace.name = wrap(trace.name)
    # Brazilian style also for four-digit ticks (1.000, not 1000), which Plotly leaves ungrouped.
    fig.update_xaxes(separatethousands=True)
    fig.update_yaxes(separatethousands=True)
    return fig


def _ci_arrays(values, intervals):
    lo = [v - c[0] for v, c in zip(values, intervals)]
    hi = [c[1] - v for v, c in zip(values, intervals)]
    return lo, hi


def metrics_bars(report: Report | Mapping, methods: Sequence[str], measures: Sequence[str], *,
                 labels: Mapping[str, str] | None = None, title: str = ""):
    """Grouped horizontal bars of a :class:`~gabarito.measure.report.Report` (or a written block of
    one), one group per measure, with the 95% interval as a whisker; the value is written inside
    the bar, at its start, where no whisker crosses it."""
    import plotly.graph_objects as go

    report = as_report(report)
    fig = go.Figure()
    names = [measure_label(m) for m in measures]
    for i, key in enumerate(methods):
        vals = [report.mean(key, m) for m in measures]
        lo, hi = _ci_arrays(vals, [report.interval(key, m) for m in measures])
        name = (labels or {}).get(key) or method(key)
        fig.add_trace(go.Bar(
            y=names, x=vals, name=name, orientation="h", marker_color=method_color(key, i),
            error_x=dict(type="data", array=hi, arrayminus=lo, thickness=1.2, width=3, color="#1F2937"),
            text=[num(v) for v in vals], textposition="inside", insidetextanchor="start",
            textfont=dict(color="white", size=11), hovertemplate="%{y}: %{x:.3f}<extra>" + html.escape(name) + "</extra>",
        ))
    height = 150 + 24 * len(measures) * len(methods)
    return layout(fig, barmode="group", height=height, title=title, uniformtext=dict(minsize=9, mode="show"),
                  xaxis=dict(title="0 = nunca acerta · 1 = sempre acerta", range=[0, 1.02]),
                  yaxis=dict(autorange="reversed"))


def grouped_bars(categories: Sequence[str], series: Mapping[str, Sequence[float]],
                 intervals: Mapping[str, Sequence[Sequence[float]]], *, yaxis_title: str, height: int = 440,
                 keys: Sequence[str] | None = None):
    """Bars: one group per category, one bar per series, 95% intervals as whiskers. Up to
    :data:`STANDING` categories the bars stand (categories along the bottom); more lie down, one row
    per category (its name on the left, the first on top), since their names would not fit side by
    side on a phone. ``keys``: each series' method key, in order, so a method has its one colour on
    every page (:func:`method_color`); without them, the palette in order."""
    import plotly.graph_objects as go

    if keys is not None and len(keys) != len(series):
        raise ValueError(f"{len(keys)} method keys for {len(series)} series")
    lying = len(categories) > STANDING
    # lying, a category is one row: its name on one line; the value axis is x, the names' axis y
    cats = [c.replace("<br>", " ") for c in categories] if lying else list(categories)
    names_axis, values_axis, error = ("y", "x", "error_x") if lying else ("x", "y", "error_y")
    hover = f"%{{{names_axis}}}: %{{{values_axis}:.3f}}<extra>"
    fig = go.Figure()
    for i, (name, vals) in enumerate(series.items()):
        lo, hi = _ci_arrays(vals, intervals[name])
        color = method_color(keys[i], i) if keys is not None else PALETTE[i % len(PALETTE)]
        whisker = dict(type="data", array=hi, arrayminus=lo, thickness=1.2, color="#1F2937")
        bar = {names_axis: cats, values_axis: list(vals), error: whisker,
               "hovertemplate": hover + html.escape(name) + "</extra>"}
        if lying:
            bar["orientation"] = "h"
        fig.add_trace(go.Bar(name=name, marker_color=color, **bar))
    if lying:
        rows = len(categories) * (10 * len(series) + 16)
        return layout(fig, barmode="group", height=max(height, 120 + rows),
                      xaxis=dict(title=yaxis_title, range=[0, 1]), yaxis=dict(autorange="reversed"))
    return layout(fig, barmode="group", height=height, yaxis=dict(title=yaxis_title, range=[0, 1]))


def overlap_bars(overlap: Mapping[str, int], n: int):
    """How many questions each method put first alone, both, or neither."""
    import plotly.graph_objects as go

    labels = ["Ambos acertam", "Só a palavra", "Só o significado", "Nenhum dos dois"]
    keys = ["both", "only_a", "only_b", "neither"]
    colors = [method_color("vector"), method_color("bm25"), "#76B7B2", "#BAB0AC"]
    vals = [overlap[k] for k in keys]
    fig = go.Figure(go.Bar(x=vals, y=labels, orientation="h", marker_color=colors,
                           text=[f"{integer(v)} de {integer(n)}" for v in vals], textposition="outside",
                           cliponaxis=False, hovertemplate="%{y}: %{x}<extra></extra>"))
    return layout(fig, height=300, showlegend=False, yaxis=dict(autorange="reversed"),
                  xaxis=dict(title=f"Perguntas (de {integer(n)})", range=[0, max(vals) * 1.35 + 1]))


def latency_bars(latency: Mapping, stages: Mapping[str, str]):
    """Median per stage with a whisker to the p95; the HTTP floor drawn as a dotted line. The
    value is written inside the bar, clear of the whisker."""
    import plotly.graph_objects as go

    keys = list(stages)
    med = [latency[k]["median"] for k in keys]
    p95 = [latency[k]["p95"] - latency[k]["median"] for k in keys]
    fig = go.Figure(go.Bar(
        y=[stages[k] for k in keys], x=med, orientation="h", marker_color=PALETTE[0],
        error_x=dict(type="data", array=p95, arrayminus=[0] * len(keys), thickness=1.2, color="#1F2937"),
        text=[f"{num(v, 1)} ms" for v in med], textposition="inside", insidetextanchor="start",
        textfont=dict(color="white"), hovertemplate="%{y}: mediana %{x:.1f} ms<extra></extra>",
    ))
    floor = latency["http_floor"]["median"]
    fig.add_vline(x=floor, line_dash="dot", line_color="#B91C1C",
                  annotation_text="piso HTTP", annotation_position="top right")
    return layout(fig, height=110 + 48 * len(keys), showlegend=False,
                  xaxis=dict(title="Milissegundos por pergunta (mediana; traço até o p95)"),
                  yaxis=dict(autorange="reversed", automargin=True))


def rank_strip(rows: Sequence[Mapping], methods: Sequence[str], cutoff: int):
    """Where each method put each question's target (beyond the cut-off drawn at cutoff + 1)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for i, key in enumerate(methods):
        ranks = [r[key]["rank"] if r[key]["rank"] is not None else cutoff + 1 for r in rows]
        fig.add_trace(go.Box(x=ranks, name=method(key), marker_color=method_color(key, i),
                             boxpoints="all", jitter=0.5, pointpos=0, line_width=1,
                             hovertemplate="posição %{x}<extra></extra>"))
    return layout(fig, height=140 + 60 * len(methods), showlegend=False,
                  xaxis=dict(title=f"Posição do alvo ({cutoff + 1} = fora do top-{cutoff})",
                             range=[0.5, cutoff + 1.5], dtick=1), yaxis=dict(automargin=True))


def score_boxes(groups: Sequence[tuple[str, Sequence[float], Sequence[float]]], *, score_title: str):
    """Two boxes per group: the scores of questions with an answer and of those without. Lying
    down, one row per group (its name on the left, wrapped), so that four models' names fit a
    phone's width; ``score_title`` names the score, on the axis the boxes lie along (x)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for flag, color, name in ((1, PALETTE[0], "com resposta"), (2, PALETTE[1], "sem resposta")):
        xs, ys = [], []
        for label, answered, unanswered in groups:
            vals = answered if flag == 1 else unanswered
            ys += [wrap(label, BOX_LABEL)] * len(vals)
            xs += list(vals)
        fig.add_trace(go.Box(x=xs, y=ys, name=name, marker_color=color, boxpoints="all", jitter=0.4,
                             pointpos=0, orientation="h", hovertemplate="%{y}: %{x:.3f}<extra>" + name + "</extra>"))
    # two short entries above the plot; the first group on top
    return layout(fig, boxmode="group", height=120 + 110 * len(groups), xaxis=dict(title=score_title),
                  yaxis=dict(autorange="reversed"), legend=dict(LEGEND, y=1.02, yanchor="bottom"))


def selector(fig, names: Sequence[str], traces_per_view: Sequence[int], *, titles: Sequence[str] | None = None):
    """A menu over the plot that shows one view at a time (``traces_per_view[i]`` consecutive
    traces form view ``i``): one figure, one caption, instead of a figure per view. A drop-down,
    so that it fits a phone whatever the number of views."""
    total = sum(traces_per_view)
    buttons, start = [], 0
    labels = [wrap(name, LINE - 6) for name in names]  # the menu's arrow takes the rest of a phone's line
    for i, (name, n) in enumerate(zip(labels, traces_per_view)):
        visible = [start <= j < start + n for j in range(total)]
        args = [{"visible": visible}]
        if titles:
            args.append({"title.text": titles[i]})
        buttons.append(dict(label=name, method="update", args=args))
        start += n
    for j, trace in enumerate(fig.data):
        trace.visible = j < traces_per_view[0]
    lines = max(label.count("<br>") + 1 for label in labels)
    fig.update_layout(updatemenus=[dict(type="dropdown", direction="down", buttons=buttons, showactive=True,
                                        active=0, x=0, xanchor="left", y=1.02, yanchor="bottom",
                                        bgcolor="#F1F5F9", font=dict(size=12))],
                      margin_t=max(fig.layout.margin.t or 0, 34 + 17 * lines))
    if titles:
        fig.update_layout(title=dict(text=titles[0], y=0.98))
    return fig


def sweep_lines(points: Sequence[Mapping], views: Sequence[str], series: Sequence[str], *,
                view_key: str, series_key: str, x_key: str, y_key: str, x_title: str, y_title: str):
    """Lines of ``y_key`` against ``x_key`` (a log axis ticked at the measured values), one line per
    ``series`` value, one view (button) per ``views`` value."""
    import plotly.graph_objects as go

    fig = go.Figure()
    xs = sorted({p[x_key] for p in points})
    for v in views:
        for i, s in enumerate(series):
            pts = sorted((p for p in points if p[view_key] == v and p[series_key] == s), key=lambda p: p[x_key])
            fig.add_trace(go.Scatter(x=[p[x_key] for p in pts], y=[p[y_key] for p in pts], mode="lines+markers",
                                     name=method(s), marker_color=method_color(s, i),
                                     hovertemplate=f"{x_title} = %{{x}}: %{{y:.3f}}<extra>{html.escape(method(s))}</extra>"))
    layout(fig, height=420, xaxis=dict(type="log", title=x_title, tickvals=xs, ticktext=[integer(x) for x in xs]),
           yaxis=dict(title=y_title, range=[0, 1]))
    return selector(fig, [method(v) for v in views], [len(series)] * len(views))


def pvalue_matrices(matrices: Sequence[tuple[str, Sequence[str], Sequence[Sequence[float | None]]]], *,
                    alpha: float = ALPHA):
    """One heatmap of corrected p-values per collection, chosen by a button; a dark cell is a
    difference that survives the correction at ``alpha``."""
    import plotly.graph_objects as go

    from gabarito.publish.formatting import pvalue

    fig = go.Figure()
    for name, axis, z in matrices:
        fig.add_trace(go.Heatmap(
            z=z, x=list(axis), y=list(axis), zmin=0, zmax=2 * alpha, showscale=False,
            colorscale=[[0, "#1D4E89"], [0.5, "#A9C8E8"], [0.5001, "#F4F6F8"], [1, "#F8FAFC"]],
            text=[[pvalue(v) if v is not None else "" for v in row] for row in z], texttemplate="%{text}", textfont=dict(size=10),
            hovertemplate="%{y} × %{x}: p de Holm %{text}<extra>" + html.escape(name) + "</extra>"))
    layout(fig, height=520, showlegend=False, xaxis=dict(tickangle=-35, automargin=True),
           yaxis=dict(automargin=True, autorange="reversed"))
    return selector(fig, [m[0] for m in matrices], [1] * len(matrices))


def loglog_fits(fits: Mapping[str, Mapping], names: Mapping[str, str], *, x_title: str, y_title: str):
    """Measured costs against corpus size on log-log axes (one tick per decade), one line per cost."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for i, (key, name) in enumerate(names.items()):
        f = fits.get(key)
        if not f:
            continue
        xs, ys = zip(*f["points"])
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers+lines", marker_color=PALETTE[i % len(PALETTE)],
                                 name=f"{name}: inclinação {num(f['slope'], 2)}"))
    axis = dict(type="log", dtick=1, exponentformat="none", tickformat=",~r", minor=dict(showgrid=False))
    return layout(fig, height=460, xaxis=dict(title=x_title, **axis), yaxis=dict(title=y_title, **axis))


def flow_diagram(steps: Sequence[tuple[str, str, str]]) -> str:
    """An inline SVG flowchart that scales to its column: ``steps`` are (title, subtitle, kind)
    with kind in {'prepare', 'frozen', 'measure'}; drawn top to bottom with arrows."""
    fills = {"prepare": ("#E8F5E9", "#2E7D32"), "frozen": ("#FFF3E0", "#B45309"),
             "measure": ("#E0F2FE", "#1D4E89")}
    w, h, gap = 460, 58, 26
    height = len(steps) * (h + gap)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="gabarito-flow" viewBox="0 0 {w} {height}" '
             f'width="100%" style="max-width:{w}px;height:auto" role="img" aria-label="Desenho do experimento">',
             '<defs><marker id="arr" markerWidth="10" markerHeight="10" refX="5" refY="5" orient="auto">'
             '<path d="M0,0 L10,5 L0,10 z" fill="#475569"/></marker></defs>']
    for i, (title, sub, kind) in enumerate(steps):
        y = i * (h + gap)
        fill, stroke = fills[kind]
        parts.append(f'<rect x="4" y="{y}" width="{w - 8}" height="{h}" rx="8" fill="{fill}" '
                     f'stroke="{stroke}" stroke-width="2"/>')
        parts.append(f'<text x="{w / 2}" y="{y + 24}" text-anchor="middle" font-size="16" '
                     f'font-weight="bold" fill="{stroke}">{html.escape(title)}</text>')
        parts.append(f'<text x="{w / 2}" y="{y + 45}" text-anchor="middle" font-size="13" '
                     f'fill="#334155">{html.escape(sub)}</text>')
        if i < len(steps) - 1:
            parts.append(f'<line x1="{w / 2}" y1="{y + h}" x2="{w / 2}" y2="{y + h + gap - 4}" '
                         f'stroke="#475569" stroke-width="2" marker-end="url(#arr)"/>')
    parts.append("</svg>")
    return "".join(parts)


def collection_name(key: str) -> str:
    return term("collection", key)


def rerank_sweep(points: Sequence[Mapping], views: Sequence[str], series: Sequence[str], *, y_title: str):
    """After reading the top N again (solid, against N on a log axis) and before (dotted, the
    first stage's level), one colour per first stage, one view (menu) per collection. Points
    carry ``view``, ``series``, ``n``, ``value`` and ``before``."""
    import plotly.graph_objects as go

    fig = go.Figure()
    xs = sorted({p["n"] for p in points})
    for v in views:
        for i, s in enumerate(series):
            pts = sorted((p for p in points if p["view"] == v and p["series"] == s), key=lambda p: p["n"])
            colour, name = method_color(s, i), method(s)
            fig.add_trace(go.Scatter(x=[p["n"] for p in pts], y=[p["value"] for p in pts], mode="lines+markers",
                                     name=f"{name}, relido", marker_color=colour,
                                     hovertemplate=f"N = %{{x}}: %{{y:.3f}}<extra>{html.escape(name)}</extra>"))
            fig.add_trace(go.Scatter(x=[xs[0], xs[-1]], y=[pts[0]["before"]] * 2, mode="lines",
                                     name=f"{name}, sem releitura", line=dict(color=colour, dash="dot"),
                                     hovertemplate=f"sem releitura: %{{y:.3f}}<extra>{html.escape(name)}</extra>"))
    layout(fig, height=440, xaxis=dict(type="log", title="candidatos relidos (N)", tickvals=xs,
                                       ticktext=[integer(x) for x in xs]), yaxis=dict(title=y_title, range=[0, 1]))
    return selector(fig, [collection_name(v) for v in views], [2 * len(series)] * len(views))


def difference_dots(categories: Sequence[str], series: Sequence[Mapping], *, x_title: str):
    """Paired differences as dots with their 95% interval, one row per category (top to bottom in
    the given order) and one colour per series: ``series`` is ``[{"name", "points": [{"category",
    "diff", "ci": (lo, hi), "holds": bool, "hover"?}]}]``. A filled dot is a difference that holds
    after Holm's correction, a hollow one a difference that does not; a dotted line marks zero. A
    point's ``hover`` (what the dot is) is also written above its row, at the left: no hover holds
    the only copy."""
    import plotly.graph_objects as go

    fig = go.Figure()
    row = {c: i for i, c in enumerate(categories)}
    several = len(series) > 1
    for j, s in enumerate(series):
        color = PALETTE[(2 * j) % len(PALETTE)]
        dy = (j - (len(series) - 1) / 2) * 0.28 if several else 0.0
        pts = [p for p in s["points"] if p["category"] in row]
        fig.add_trace(go.Scatter(
            x=[p["diff"] for p in pts], y=[row[p["category"]] + dy for p in pts], mode="markers", showlegend=False,
            marker=dict(size=11, color=color, line=dict(width=2, color=color),
                        symbol=["circle" if p["holds"] else "circle-open" for p in pts]),
            error_x=dict(type="data", array=[p["ci"][1] - p["diff"] for p in pts],
                         arrayminus=[p["diff"] - p["ci"][0] for p in pts], thickness=1.5, color=color),
            customdata=[p.get("hover") or s["name"] for p in pts],
            hovertemplate="%{customdata}: %{x:+.3f}<extra></extra>"))
        for p in pts:  # what the hover names is written too, at the left of its row, above the dot
            if p.get("hover"):
                fig.add_annotation(xref="paper", x=0, xanchor="left", y=row[p["category"]] + dy - 0.36,
                                   yanchor="middle", text=html.escape(p["hover"]), showarrow=False,
                                   font=dict(size=10, color="#374151"))
        if several:  # the series' colour in the legend
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=s["name"],
                                     marker=dict(size=11, symbol="square", color=color)))
    grey = "#6B7280"
    for symbol, name in (("circle", "cheio: resiste à correção de Holm"), ("circle-open", "vazio: não resiste")):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name,
                                 marker=dict(size=11, symbol=symbol, color=grey, line=dict(width=2, color=grey))))
    fig.add_vline(x=0, line_dash="dot", line_color=grey)
    return layout(fig, height=140 + (56 if several else 44) * len(categories),
                  xaxis=dict(title=x_title, zeroline=False),
                  yaxis=dict(tickvals=list(range(len(categories))), ticktext=list(categories), autorange="reversed",
                             showgrid=False))
