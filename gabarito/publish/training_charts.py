"""Figures of how a reader was trained (plotly): the training loss step by step, and the learning
curve on validation questions checkpoint by checkpoint. Built from the findings' rows; no
numbers of their own."""

from __future__ import annotations

import html
from typing import Mapping, Sequence

from gabarito.publish.charts import PALETTE, collection_name, layout, selector
from gabarito.publish.labels import method
from gabarito.publish.palette import method_color


def loss_curves(curves: Mapping[str, Sequence[Sequence[float]]]):
    """The training loss against the step, one line per model (keys are collection keys: the
    collection each model was *not* trained on)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for i, (key, curve) in enumerate(curves.items()):
        name = f"sem {collection_name(key)}"
        fig.add_trace(go.Scatter(x=[c[0] for c in curve], y=[c[1] for c in curve], mode="lines", name=name,
                                 marker_color=PALETTE[i % len(PALETTE)],
                                 hovertemplate=f"passo %{{x}}: %{{y:.3f}}<extra>{html.escape(name)}</extra>"))
    return layout(fig, height=360, xaxis=dict(title="passo de treino (lote de 16 pares)"),
                  yaxis=dict(title="perda (entropia cruzada binária)"))


#: How a view names the device a curve was trained on (the CPU, the book's default, goes unsaid).
DEVICES = {"cpu": "", "cuda": " (GPU)", "mps": " (GPU)"}


def run_name(held_out: str, device: str) -> str:
    """A training run as a page names it: its held-out collection, and its device when not the CPU."""
    return collection_name(held_out) + DEVICES.get(device, f" ({device})")


def learning_curves(curves: Sequence[Mapping], *, y_title: str):
    """The validation measure against the pairs seen, one view (menu) per curve (a held-out
    collection on a device): the fused reading and the reader's order alone (lines with a marker
    at each checkpoint) and the first stage (a dotted level: it does not change with training).
    ``curves`` is :func:`studies.standard_collections.curve_findings.curves`: per curve
    ``held_out``, ``device``, ``pairs``, the values of ``fused`` and ``alone``, the
    ``first_stage``'s level, and the three methods (``fused_method``, ``alone_method``,
    ``first_method``), which name and colour the lines."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for c in curves:
        for values, m in ((c["fused"], c["fused_method"]), (c["alone"], c["alone_method"])):
            name = method(m)
            fig.add_trace(go.Scatter(x=c["pairs"], y=values, mode="lines+markers", name=name, marker_color=method_color(m, 1),
                                     hovertemplate=f"%{{x:,}} pares: %{{y:.3f}}<extra>{html.escape(name)}</extra>"))
        stage = method(c["first_method"])
        fig.add_trace(go.Scatter(x=[c["pairs"][0], c["pairs"][-1]], y=[c["first_stage"]] * 2, mode="lines",
                                 name=f"{stage}, sem releitura", line=dict(color=method_color(c["first_method"], 0), dash="dot"),
                                 hovertemplate=f"sem releitura: %{{y:.3f}}<extra>{html.escape(stage)}</extra>"))
    most = max((c["pairs"][-1] for c in curves), default=1) or 1
    # a little room left of the first checkpoint, so that the two axes' "0" do not meet in the corner
    layout(fig, height=420, xaxis=dict(title="pares de treino vistos", range=[-0.03 * most, 1.03 * most]),
           yaxis=dict(title=y_title, rangemode="tozero"))
    views = [run_name(c["held_out"], c["device"]) for c in curves]
    return selector(fig, views, [3] * len(curves))
