"""The book's one palette: a method has its colour from its identity, the same on every page.

Methods of one family share a hue -- word search (BM25) blues, meaning search (dense vectors)
greens, fusions oranges and purples, learned sparse teal, second readers reds and browns -- and
each method of a family has its own shade, so that the methods a chart puts side by side differ.
A leaf method (:func:`gabarito.core.methods.leaf`) has its colour in :data:`LEAF_COLOURS` (a test
holds every method the site names to one); a compound method has it from its fields: a fusion by
its depth, a reading by how it is joined to its first stage, a first stage or a re-reading as its
scorer. :data:`PALETTE` colours what is not a method (phases, curves, kinds of questions), in order.
"""

from __future__ import annotations

from gabarito.core.methods import Method

#: Eight distinct hues (Tableau 10 without its yellow and grey), in order of use, for what is not a method.
PALETTE = ("#4E79A7", "#F28E2B", "#59A14F", "#E15759", "#B07AA1", "#76B7B2", "#9C755F", "#FF9DA7")

_BLUE, _LIGHT_BLUE, _DARK_BLUE = "#4E79A7", "#A0CBE8", "#1F3F66"
_GREEN, _LIGHT_GREEN, _DARK_GREEN, _OLIVE = "#59A14F", "#8CD17D", "#2F6B28", "#B6992D"
_ORANGE, _LIGHT_ORANGE, _PURPLE, _PINK, _MAUVE = "#F28E2B", "#FFBE7D", "#B07AA1", "#D37295", "#6B3F7A"
_RED, _BROWN, _ROSE, _GREY, _YELLOW = "#E15759", "#9C755F", "#FF9DA7", "#79706E", "#E8C547"
_TEAL, _DARK_TEAL = "#76B7B2", "#17807E"
_RASPBERRY, _LIGHT_GREY = "#8F2D56", "#BAB0AC"

#: Every leaf method's colour, by family.
LEAF_COLOURS = {
    # word search
    "bm25": _BLUE, "bm25_arcadedb_standard": _BLUE, "bm25_arcadedb_english": _DARK_BLUE, "bm25s": _LIGHT_BLUE,
    # meaning search (and the readers that compare vectors)
    "vector": _GREEN, "dense": _GREEN, "dense_mpnet": _GREEN, "dense_mpnet_arcadedb": _DARK_GREEN,
    "dense_minilm": _LIGHT_GREEN, "dense MiniLM": _LIGHT_GREEN, "dense e5": _OLIVE,
    "cosine MiniLM": _LIGHT_GREEN, "cosine e5": _OLIVE, "bi-encoder mpnet": _DARK_GREEN,
    # fusions
    "rrf": _ORANGE, "hybrid": _ORANGE, "rrf_mpnet": _ORANGE, "rrf_minilm": _LIGHT_ORANGE,
    "rrf_k60": _ORANGE, "rrf_k1": _LIGHT_ORANGE, "rrf_k10": _RASPBERRY, "rrf_k100": _PURPLE, "rrf_k60_native": _LIGHT_GREY,
    "wrrf_cv": _RED, "linear_cv": _TEAL, "dbsf": _BROWN, "dbsf_native": _YELLOW, "combsum": _ROSE, "combmnz": _MAUVE,
    # learned sparse, and the readers of the reranking chapter
    "splade": _DARK_TEAL, "splade-tiny": _TEAL, "maxsim MiniLM": _BROWN, "maxsim MiniLM per query token": _YELLOW,
}
#: A fusion of the top K: the headline's depth in orange, the deep one in purple, any other in pink.
FUSION_BY_TOP = {10: _ORANGE, 100: _PURPLE}
#: A second reading, by how it is joined to its first stage.
READING_COLOURS = {"replace": _RED, "rrf": _ORANGE, "convex": _BROWN}
#: A cross-encoder reader.
CROSS_ENCODER = _RED


def method_color(key: str | Method | None, index: int = 0) -> str:
    """The colour of a method on every page; a key that is not a method (``None``, a phase, a
    curve) takes the :data:`PALETTE` colour of its ``index``."""
    if isinstance(key, Method) and key.kind != "leaf":
        if key.kind == "fused":
            return FUSION_BY_TOP.get(key.top, _PINK)
        if key.kind == "reading":
            return READING_COLOURS[key.how]
        if key.kind == "cross_encoder":
            return CROSS_ENCODER
        return method_color(key.inputs[0], index)  # a first stage or a re-reading: its scorer's colour
    if key in LEAF_COLOURS:
        return LEAF_COLOURS[key]
    return PALETTE[index % len(PALETTE)]
