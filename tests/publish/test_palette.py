"""The book's one palette (gabarito.publish.palette): a method's colour comes from its identity --
every method the site can name has one, a compound method takes it from its fields, never from its
place in a chart -- and the methods a chart of the site puts side by side are far enough apart."""

from __future__ import annotations

import itertools

import pytest

from gabarito.core import methods as M
from gabarito.publish import labels, palette
from gabarito.publish.charts import grouped_bars


def _distance(a: str, b: str) -> float:
    rgb = [tuple(int(h.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4)) for h in (a, b)]
    return sum((x - y) ** 2 for x, y in zip(*rgb)) ** 0.5


def test_every_method_the_site_names_has_its_colour_in_one_table():
    """Names and colours are read from one table of leaves: neither without the other."""
    from gabarito.publish.leaves import LEAVES

    assert labels.METHODS == {k: leaf.label for k, leaf in LEAVES.items()}
    assert palette.LEAF_COLOURS == {k: leaf.colour for k, leaf in LEAVES.items()}
    bad = [k for k, leaf in LEAVES.items()
           if not (leaf.label.strip() and len(leaf.colour) == 7 and leaf.colour.startswith("#"))]
    assert not bad, f"leaves without a name or a colour: {bad}"


def test_a_compound_method_takes_its_colour_from_its_fields_not_its_place():
    ten, hundred = M.fused(10, ["bm25", "vector"]), M.fused(100, ["bm25", "vector"])
    assert palette.method_color(ten, 5) == palette.method_color(ten, 0) == palette.FUSION_BY_TOP[10]
    assert palette.method_color(hundred) == palette.FUSION_BY_TOP[100] != palette.method_color(ten)
    # a first stage and a re-reading are drawn as their scorer
    assert palette.method_color(M.first_stage("bm25")) == palette.method_color("bm25")
    reread = M.reread("splade-tiny", "dense e5", 20)
    assert palette.method_color(reread) == palette.method_color("splade-tiny")
    assert palette.method_color(M.reading("convex", 20)) == palette.READING_COLOURS["convex"]
    # what is not a method takes the palette in order
    assert palette.method_color("ingest", 3) == palette.PALETTE[3]


#: The methods the site's charts put side by side (one chart each).
TOGETHER = {
    "benchmark": ["bm25", "vector", M.fused(10), M.fused(100)],
    "classic collections": ["bm25_arcadedb_standard", "bm25_arcadedb_english", "bm25s", "dense_minilm",
                            "dense_mpnet", "dense_mpnet_arcadedb", "rrf_minilm", "rrf_mpnet"],
    "fusion functions": ["bm25", "dense", "rrf_k60", "linear_cv", "wrrf_cv", "dbsf", "combsum", "combmnz",
                         "dbsf_native", "rrf_k60_native"],
    "rrf constants": ["rrf_k1", "rrf_k10", "rrf_k60", "rrf_k100"],
    "first stages": ["bm25", "dense MiniLM", "dense e5", "rrf", "splade"],
    "readers": ["maxsim MiniLM", "maxsim MiniLM per query token", "bi-encoder mpnet", "splade-tiny",
                M.cross_encoder("cross-encoder/ms-marco-MiniLM-L-6-v2")],
    "readings": ["bm25", M.reading("replace", 20), M.reading("rrf", 20), M.reading("convex", 20)],
}


@pytest.mark.parametrize("chart", list(TOGETHER))
def test_methods_drawn_together_are_far_apart(chart):
    coloured = [(m, palette.method_color(m)) for m in TOGETHER[chart]]
    for (a, ca), (b, cb) in itertools.combinations(coloured, 2):
        assert _distance(ca, cb) > 60, (chart, a, b, ca, cb)


def test_grouped_bars_draw_a_method_value_in_its_colour():
    fused = M.fused(10, ["bm25", "vector"])
    series = {"Fusão": [0.5, 0.6], "BM25": [0.4, 0.3]}
    ci = {k: [[v - 0.1, v + 0.1] for v in vals] for k, vals in series.items()}
    fig = grouped_bars(["a", "b"], series, ci, yaxis_title="x", keys=[fused, "bm25"])
    assert [t.marker.color for t in fig.data] == [palette.FUSION_BY_TOP[10], palette.LEAF_COLOURS["bm25"]]
