"""Figures of the pages (plotly), built from results dictionaries; no numbers of their own."""

from __future__ import annotations

import html
from typing import Mapping, Sequence

from gabarito.publish.formatting import MEASURE_LABELS, method_label, num

COLORS = {"bm25": "#64748B", "vector": "#0E7490", "rrf": "#C2410C", "rrf_deep": "#7C2D12"}


#: Colours for variants that are not one of the named methods, in order of appearance.
PALETTE = ("#0E7490", "#C2410C", "#15803D", "#7C3AED", "#B45309", "#BE123C", "#475569", "#0369A1")


def method_color(method: str, index: int = 0) -> str:
    if method.startswith("rrf@"):
        return COLORS["rrf"] if method == "rrf@10" else COLORS["rrf_deep"]
    return COLORS.get(method) or PALETTE[index % len(PALETTE)]


def _layout(fig, **kw):
    fig.update_layout(template="plotly_white", font=dict(size=12),
                      margin=dict(l=10, r=10, t=50, b=40), **kw)
    return fig


def metrics_bars(result_set: Mapping, methods: Sequence[str], measures: Sequence[str], *, title: str = ""):
    """Grouped horizontal bars, one group per measure, with the bootstrap 95% CI as error bars."""
    import plotly.graph_objects as go

    fig = go.Figure()
    labels = [MEASURE_LABELS.get(m, m) for m in measures]
    for i, method in enumerate(methods):
        vals = [result_set["metrics"][method][m] for m in measures]
        lo = [v - result_set["ci95"][method][m][0] for v, m in zip(vals, measures)]
        hi = [result_set["ci95"][method][m][1] - v for v, m in zip(vals, measures)]
        fig.add_trace(go.Bar(
            y=labels, x=vals, name=method_label(method), orientation="h",
            marker_color=method_color(method, i),
            error_x=dict(type="data", array=hi, arrayminus=lo, thickness=1, width=3),
            text=[num(v) for v in vals], textposition="outside", cliponaxis=False,
            hovertemplate="%{y}: %{x:.3f}<extra>" + method_label(method) + "</extra>",
        ))
    return _layout(fig, barmode="group", height=120 + 36 * len(measures) * len(methods) // 2,
                   title=title, xaxis=dict(title="0 = nunca acerta · 1 = sempre acerta", range=[0, 1.15]),
                   yaxis=dict(autorange="reversed"),
                   legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0))


def overlap_bars(overlap: Mapping[str, int], n: int):
    import plotly.graph_objects as go

    labels = ["Ambos acertam", "Só a palavra", "Só o significado", "Nenhum dos dois"]
    keys = ["both", "only_a", "only_b", "neither"]
    colors = ["#15803D", COLORS["bm25"], COLORS["vector"], "#CBD5E1"]
    vals = [overlap[k] for k in keys]
    fig = go.Figure(go.Bar(x=vals, y=labels, orientation="h", marker_color=colors,
                           text=[f"{v} de {n}" for v in vals], textposition="outside", cliponaxis=False,
                           hovertemplate="%{y}: %{x}<extra></extra>"))
    return _layout(fig, height=300, showlegend=False, yaxis=dict(autorange="reversed"),
                   xaxis=dict(title=f"Perguntas (de {n})", range=[0, max(vals) * 1.3 + 1]))


def latency_bars(latency: Mapping, stages: Mapping[str, str]):
    """Median per stage with a p95 whisker; the HTTP floor drawn as a line."""
    import plotly.graph_objects as go

    keys = list(stages)
    med = [latency[k]["median"] for k in keys]
    p95 = [latency[k]["p95"] - latency[k]["median"] for k in keys]
    fig = go.Figure(go.Bar(
        y=[stages[k] for k in keys], x=med, orientation="h", marker_color="#0E7490",
        error_x=dict(type="data", array=p95, arrayminus=[0] * len(keys), thickness=1),
        text=[f"{num(v, 1)} ms" for v in med], textposition="outside", cliponaxis=False,
        hovertemplate="%{y}: mediana %{x:.1f} ms<extra></extra>",
    ))
    floor = latency["http_floor"]["median"]
    fig.add_vline(x=floor, line_dash="dot", line_color="#B91C1C",
                  annotation_text="piso HTTP", annotation_position="top right")
    return _layout(fig, height=90 + 48 * len(keys), showlegend=False,
                   xaxis=dict(title="Milissegundos por pergunta (mediana; traço até o p95)"),
                   yaxis=dict(autorange="reversed"))


def rank_strip(rows: Sequence[Mapping], methods: Sequence[str], cutoff: int):
    """Where each method put each question's target (beyond the cut-off drawn at cutoff + 1)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for method in methods:
        ranks = [r[method]["rank"] if r[method]["rank"] is not None else cutoff + 1 for r in rows]
        fig.add_trace(go.Box(x=ranks, name=method_label(method), marker_color=method_color(method),
                             boxpoints="all", jitter=0.5, pointpos=0, line_width=1,
                             hovertemplate="posição %{x}<extra></extra>"))
    return _layout(fig, height=120 + 60 * len(methods), showlegend=False,
                   xaxis=dict(title=f"Posição do alvo ({cutoff + 1} = fora do top-{cutoff})",
                              range=[0.5, cutoff + 1.5], dtick=1))


def flow_diagram(steps: Sequence[tuple[str, str, str]]) -> str:
    """An inline SVG flowchart: ``steps`` are (title, subtitle, kind) with kind in
    {'prepare', 'frozen', 'measure'}; drawn top to bottom with arrows. Needs no script."""
    fills = {"prepare": ("#E8F5E9", "#2E7D32"), "frozen": ("#FFF3E0", "#C2410C"),
             "measure": ("#E0F7FA", "#0E7490")}
    w, h, gap = 460, 58, 26
    height = len(steps) * (h + gap)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="gabarito-flow" viewBox="0 0 {w} {height}" '
             f'width="{w}" height="{height}" role="img" aria-label="Desenho do experimento">',
             '<defs><marker id="arr" markerWidth="10" markerHeight="10" refX="5" refY="5" orient="auto">'
             '<path d="M0,0 L10,5 L0,10 z" fill="#475569"/></marker></defs>']
    for i, (title, sub, kind) in enumerate(steps):
        y = i * (h + gap)
        fill, stroke = fills[kind]
        parts.append(f'<rect x="20" y="{y}" width="{w - 40}" height="{h}" rx="8" fill="{fill}" '
                     f'stroke="{stroke}" stroke-width="2"/>')
        parts.append(f'<text x="{w / 2}" y="{y + 24}" text-anchor="middle" font-size="15" '
                     f'font-weight="bold" fill="{stroke}">{html.escape(title)}</text>')
        parts.append(f'<text x="{w / 2}" y="{y + 44}" text-anchor="middle" font-size="12" '
                     f'fill="#334155">{html.escape(sub)}</text>')
        if i < len(steps) - 1:
            parts.append(f'<line x1="{w / 2}" y1="{y + h}" x2="{w / 2}" y2="{y + h + gap - 4}" '
                         f'stroke="#475569" stroke-width="2" marker-end="url(#arr)"/>')
    parts.append("</svg>")
    return "".join(parts)
