"""The book's one palette: a method has its colour from its identity, the same on every page.

Methods of one family share a hue -- word search (BM25) blues, meaning search (dense vectors)
greens, fusions oranges and purples, learned sparse teal, second readers reds and browns -- and
each method of a family has its own shade, so that the methods a chart puts side by side differ.
A leaf method (:func:`gabarito.core.methods.leaf`) has its colour beside its name in
:data:`gabarito.publish.leaves.LEAVES`; a compound method has it from its fields: a fusion by
its depth, a reading by how it is joined to its first stage, a first stage or a re-reading as its
scorer. :data:`PALETTE` colours what is not a method (phases, curves, kinds of questions), in order.
"""

from __future__ import annotations

from gabarito.core.methods import Method
from gabarito.publish.leaves import BROWN, LEAVES, ORANGE, PINK, PURPLE, RED

#: Eight distinct hues (Tableau 10 without its yellow and grey), in order of use, for what is not a method.
PALETTE = ("#4E79A7", "#F28E2B", "#59A14F", "#E15759", "#B07AA1", "#76B7B2", "#9C755F", "#FF9DA7")

#: Every leaf method's colour (:data:`gabarito.publish.leaves.LEAVES`, beside its name).
LEAF_COLOURS = {key: leaf.colour for key, leaf in LEAVES.items()}
#: A fusion of the top K: the headline's depth in orange, the deep one in purple, any other in pink.
FUSION_BY_TOP = {10: ORANGE, 100: PURPLE}
#: A second reading, by how it is joined to its first stage.
READING_COLOURS = {"replace": RED, "rrf": ORANGE, "convex": BROWN}
#: A cross-encoder reader.
CROSS_ENCODER = RED


def method_color(key: str | Method | None, index: int = 0) -> str:
    """The colour of a method on every page; a key that is not a method (``None``, a phase, a
    curve) takes the :data:`PALETTE` colour of its ``index``."""
    if isinstance(key, Method) and key.kind != "leaf":
        if key.kind == "fused":
            return FUSION_BY_TOP.get(key.top, PINK)
        if key.kind == "reading":
            return READING_COLOURS[key.how]
        if key.kind == "cross_encoder":
            return CROSS_ENCODER
        if key.kind == "trained_reading":  # the reader's order replaces the first stage's
            return READING_COLOURS["replace"]
        return method_color(key.inputs[0], index)  # a first stage or a re-reading: its scorer's colour
    if key in LEAF_COLOURS:
        return LEAF_COLOURS[key]
    return PALETTE[index % len(PALETTE)]
