"""The book's one table of leaf methods: for each key a results file uses for a method that is not
made of others (:func:`gabarito.core.methods.leaf`), its Portuguese name and its colour, side by
side, so that a method can have neither without the other.

:data:`gabarito.publish.labels.METHODS` (names) and :data:`gabarito.publish.palette.LEAF_COLOURS`
(colours) are read from here. Colours go by family: word search blues, meaning search greens,
fusions oranges and purples, learned sparse teal, the readers of the reranking chapter reds and
browns; each method its own shade. A compound method (a fusion, a reading, a re-reading) has no
row: its name and colour come from its fields.
"""

from __future__ import annotations

from typing import NamedTuple

# The hues (Tableau 10 and its lighter and darker shades).
BLUE, LIGHT_BLUE, DARK_BLUE = "#4E79A7", "#A0CBE8", "#1F3F66"
GREEN, LIGHT_GREEN, DARK_GREEN, OLIVE = "#59A14F", "#8CD17D", "#2F6B28", "#B6992D"
ORANGE, LIGHT_ORANGE, PURPLE, PINK, MAUVE = "#F28E2B", "#FFBE7D", "#B07AA1", "#D37295", "#6B3F7A"
RED, BROWN, ROSE, GREY, YELLOW = "#E15759", "#9C755F", "#FF9DA7", "#79706E", "#E8C547"
TEAL, DARK_TEAL = "#76B7B2", "#17807E"
RASPBERRY, LIGHT_GREY = "#8F2D56", "#BAB0AC"


class Leaf(NamedTuple):
    label: str
    colour: str


#: Every leaf method the site names: its key in the results, its Portuguese name, its colour.
LEAVES: dict[str, Leaf] = {
    # word search (the flagship, the classic collections)
    "bm25": Leaf("Palavra (BM25)", BLUE),
    "bm25_arcadedb_standard": Leaf("BM25 ArcadeDB (padrão)", BLUE),
    "bm25_arcadedb_english": Leaf("BM25 ArcadeDB (inglês)", DARK_BLUE),
    "bm25s": Leaf("bm25s (referência)", LIGHT_BLUE),
    # meaning search
    "vector": Leaf("Significado (vetor)", GREEN),
    "dense": Leaf("Denso", GREEN),
    "dense_mpnet": Leaf("Denso mpnet", GREEN),
    "dense_mpnet_arcadedb": Leaf("Denso mpnet (índice ArcadeDB)", DARK_GREEN),
    "dense_minilm": Leaf("Denso MiniLM", LIGHT_GREEN),
    "dense MiniLM": Leaf("Denso MiniLM", LIGHT_GREEN),
    "dense e5": Leaf("Denso e5 de 4 bits", OLIVE),
    # fusions named as leaves (the classic collections', the fusion study's, the evaluate chapter's)
    "rrf": Leaf("Fusão RRF", ORANGE),
    "hybrid": Leaf("Fusão RRF de denso e BM25", ORANGE),
    "rrf_mpnet": Leaf("RRF BM25 + mpnet", ORANGE),
    "rrf_minilm": Leaf("RRF BM25 + MiniLM", LIGHT_ORANGE),
    "rrf_k1": Leaf("RRF, k = 1", LIGHT_ORANGE),
    "rrf_k10": Leaf("RRF, k = 10", RASPBERRY),
    "rrf_k60": Leaf("RRF, k = 60", ORANGE),
    "rrf_k100": Leaf("RRF, k = 100", PURPLE),
    "rrf_k60_native": Leaf("RRF, k = 60, no ArcadeDB", LIGHT_GREY),
    "wrrf_cv": Leaf("RRF ponderado (peso ajustado)", RED),
    "linear_cv": Leaf("Combinação convexa (peso ajustado)", TEAL),
    "dbsf": Leaf("DBSF", BROWN),
    "dbsf_native": Leaf("DBSF no ArcadeDB", YELLOW),
    "combsum": Leaf("CombSUM", ROSE),
    "combmnz": Leaf("CombMNZ", MAUVE),
    # learned sparse, and the readers and scorers of the reranking chapter
    "splade": Leaf("SPLADE esparso", DARK_TEAL),
    "splade-tiny": Leaf("SPLADE-tiny", TEAL),
    "bi-encoder mpnet": Leaf("Bi-encoder mpnet", DARK_GREEN),
    "maxsim MiniLM": Leaf("MaxSim MiniLM", BROWN),
    "maxsim MiniLM per query token": Leaf("MaxSim MiniLM por token da pergunta", YELLOW),
    "cosine MiniLM": Leaf("Cosseno MiniLM", LIGHT_GREEN),
    "cosine e5": Leaf("Cosseno e5 de 4 bits", OLIVE),
}
