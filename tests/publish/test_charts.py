"""The chart helpers: Brazilian axes, colours apart, labels clear of whiskers, readable log axes."""

from __future__ import annotations

import itertools

import plotly.io as pio
import pytest

from gabarito.publish import charts
from gabarito.publish.plots import CONFIG, RENDERER, setup_plotly


def _rgb(hex_color: str) -> tuple[int, int, int]:
    h = hex_color.lstrip("#")
    return tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))


def test_palette_colours_are_far_apart():
    """No two colours of the palette (what is not a method, in order) are near-identical; methods'
    colours are held apart where they meet, in tests/publish/test_palette.py."""
    colors = list(charts.PALETTE)
    for a, b in itertools.combinations(set(colors), 2):
        distance = sum((x - y) ** 2 for x, y in zip(_rgb(a), _rgb(b))) ** 0.5
        assert distance > 60, (a, b, distance)


def test_template_has_brazilian_separators_and_no_toolbar():
    setup_plotly()
    assert pio.templates.default == RENDERER
    assert pio.templates[RENDERER].layout.separators == ",."
    assert CONFIG["displayModeBar"] is False and CONFIG["responsive"] is True


def _result_set():
    return {"metrics": {"bm25": {"R@1": 0.9, "RR@10": 0.95}, "vector": {"R@1": 0.675, "RR@10": 0.75}},
            "ci95": {"bm25": {"R@1": [0.8, 0.975], "RR@10": [0.9, 0.99]},
                     "vector": {"R@1": [0.5, 0.8], "RR@10": [0.6, 0.86]}}}


def test_metrics_bars_values_inside_the_bar_and_legend_below():
    fig = charts.metrics_bars(_result_set(), ["bm25", "vector"], ["R@1", "RR@10"])
    for trace in fig.data:
        assert trace.textposition == "inside" and trace.insidetextanchor == "start"
        assert all("," in t for t in trace.text)  # 0,900, not 0.900
    assert [t.name for t in fig.data] == ["Palavra (BM25)", "Significado (vetor)"]
    assert list(fig.data[0].y) == ["Recall@1", "MRR@10"]
    assert fig.layout.legend.y < 0  # under the plot, where the toolbar cannot cover it
    assert fig.data[0].error_x.array[0] == 0.975 - 0.9


def test_sweep_lines_log_axis_ticked_at_the_measured_values():
    points = [{"reader": r, "first_stage": s, "N": n, "mrr": 0.5} for r in ("bi-encoder mpnet", "splade-tiny")
              for s in ("bm25", "dense e5") for n in (5, 20, 100, 1000)]
    fig = charts.sweep_lines(points, ["bi-encoder mpnet", "splade-tiny"], ["bm25", "dense e5"], view_key="reader",
                             series_key="first_stage", x_key="N", y_key="mrr", x_title="N", y_title="MRR")
    assert fig.layout.xaxis.type == "log"
    assert list(fig.layout.xaxis.tickvals) == [5, 20, 100, 1000]
    assert list(fig.layout.xaxis.ticktext) == ["5", "20", "100", "1.000"]  # no ², ⁵ minor labels
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["Bi-encoder mpnet", "SPLADE-tiny"]
    assert [t.visible for t in fig.data] == [True, True, False, False]
    assert buttons[1].args[0]["visible"] == [False, False, True, True]


def test_loglog_fits_one_tick_per_decade():
    fits = {"ingest_s": {"slope": 0.667, "points": [[82.0, 0.35], [1400.0, 2.46], [11429.0, 9.3]]}}
    fig = charts.loglog_fits(fits, {"ingest_s": "carga (s)"}, x_title="Documentos", y_title="Custo")
    assert fig.layout.xaxis.dtick == 1 and fig.layout.xaxis.exponentformat == "none"
    assert fig.data[0].name == "carga (s): inclinação 0,67"


def test_pvalue_matrices_one_view_per_collection():
    z = [[None, 0.01], [0.01, None]]
    fig = charts.pvalue_matrices([("ADI", ["A", "B"], z), ("NPL", ["A", "B"], z)])
    assert len(fig.data) == 2 and [t.visible for t in fig.data] == [True, False]
    assert fig.data[0].text[0][1] == "0,010"


def test_flow_diagram_scales_and_escapes():
    svg = charts.flow_diagram([("1 · <a>", "sub & co", "prepare"), ("2", "x", "measure")])
    assert 'width="100%"' in svg and "viewBox" in svg
    assert "&lt;a&gt;" in svg and "sub &amp; co" in svg


def test_difference_dots_fill_what_holds_and_span_each_interval():
    fig = charts.difference_dots(["A", "B"], [
        {"name": "x", "points": [{"category": "A", "diff": 0.1, "ci": (0.05, 0.2), "holds": True},
                                 {"category": "B", "diff": -0.02, "ci": (-0.1, 0.04), "holds": False}]},
        {"name": "y", "points": [{"category": "B", "diff": 0.03, "ci": (0.01, 0.05), "holds": True}]}],
        x_title="Diferença")
    first = fig.data[0]
    assert list(first.marker.symbol) == ["circle", "circle-open"]
    assert [round(v, 6) for v in first.error_x.array] == [0.1, 0.06]
    assert [round(v, 6) for v in first.error_x.arrayminus] == [0.05, 0.08]
    assert first.y[0] < 0 < first.y[1]  # row A above row B, series x shifted up
    assert {t.name for t in fig.data if t.name} >= {"x", "y", "cheio: resiste à correção de Holm", "vazio: não resiste"}


def test_grouped_bars_give_each_method_its_one_colour_on_every_page():
    from gabarito.publish.charts import grouped_bars
    from gabarito.publish.palette import LEAF_COLOURS as COLORS

    series = {"Vetor": [0.5, 0.6], "BM25": [0.4, 0.3]}
    ci = {k: [[v - 0.1, v + 0.1] for v in vals] for k, vals in series.items()}
    keyed = grouped_bars(["a", "b"], series, ci, yaxis_title="x", keys=["vector", "bm25"])
    assert [t.marker.color for t in keyed.data] == [COLORS["vector"], COLORS["bm25"]]
    plain = grouped_bars(["a", "b"], series, ci, yaxis_title="x")
    assert plain.data[0].marker.color != COLORS["vector"]  # by order, the first colour is BM25's
    with pytest.raises(ValueError, match="2 series"):
        grouped_bars(["a", "b"], series, ci, yaxis_title="x", keys=["vector"])


def test_long_legend_entries_and_menu_labels_wrap_for_a_phone():
    """Issue 44, item 5: on a 390-px screen a legend entry or a menu label of 65 characters ran out of the
    chart's box (the menu's ▼ outside it); each now wraps at :data:`charts.LINE` characters, and a menu of
    two-line labels gets the room above the plot it needs."""
    long = "Cross-encoder treinado aqui, em inglês, sem a Cranfield no treino"
    assert charts.wrap("curto") == "curto"
    assert all(len(line) <= charts.LINE for line in charts.wrap(long).split("<br>"))
    assert charts.wrap("já<br>quebrado") == "já<br>quebrado"
    points = [{"view": v, "series": "bm25", "n": n, "value": 0.5, "before": 0.4} for v in ("cranfield", "npl")
              for n in (5, 20)]
    fig = charts.rerank_sweep(points, ["cranfield", "npl"], ["bm25"], y_title="MRR")
    fig.data[0].name = long
    fig = charts.layout(fig)
    assert "<br>" in fig.data[0].name
    grouped = charts.grouped_bars(["a"], {long: [0.5]}, {long: [[0.4, 0.6]]}, yaxis_title="x")
    assert all(len(line) <= charts.LINE for line in grouped.data[0].name.split("<br>"))
    menu = charts.selector(grouped, ["curto", long], [1, 0])
    labels = [b.label for b in menu.layout.updatemenus[0].buttons]
    assert labels[0] == "curto" and labels[1].count("<br>") >= 1
    assert all(len(line) <= charts.LINE - 6 for line in labels[1].split("<br>"))
    assert menu.layout.margin.t >= 34 + 17 * (labels[1].count("<br>") + 1)


def test_difference_dots_write_what_the_hover_names():
    """Issue 44, item 5: fusão's Figura 1 named each dot's fusion function only on hover ("Passe o dedo ou o
    mouse"); the name is now written above its row too."""
    fig = charts.difference_dots(["A", "B"], [{"name": "x", "points": [
        {"category": "A", "diff": 0.1, "ci": (0.05, 0.2), "holds": True, "hover": "CombSUM"},
        {"category": "B", "diff": -0.02, "ci": (-0.1, 0.04), "holds": False, "hover": "RRF <ponderado>"}]}],
        x_title="Diferença")
    notes = [(a.text, a.y) for a in fig.layout.annotations if a.text in ("CombSUM", "RRF &lt;ponderado&gt;")]
    assert [t for t, _ in notes] == ["CombSUM", "RRF &lt;ponderado&gt;"]
    assert notes[0][1] < 0 < notes[1][1] < 1  # above each row (the axis runs downwards)
    assert list(fig.data[0].customdata) == ["CombSUM", "RRF <ponderado>"]
