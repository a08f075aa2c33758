"""Fusion inside the database: ArcadeDB's ``vector.fuse`` as a retriever of the pipeline.

One statement per question fuses the full-text and the vector sub-queries on the server:

    SELECT doc_id, score FROM (SELECT expand(vector.fuse(
        (SELECT @rid, doc_id, $score AS score FROM <Type> WHERE SEARCH_INDEX('<text index>', :q) = true
         ORDER BY score DESC LIMIT :depth),
        (SELECT expand(vector.neighbors('<vector index>', :v, :depth))),
        {fusion: :opt_fusion, k: :opt_k, weights: :opt_weights, limit: :opt_limit})))

Everything a user supplies is a bound parameter: the question (Lucene-escaped) as ``:q``, its
vector as ``:v``, the depth, and each option of the map (``fusion`` 'RRF'|'DBSF'|'LINEAR', ``k``,
``weights``, ``limit``) as ``:opt_<name>``; only the index names, read from the index's own metadata and checked
when it was created, are part of the SQL text. The output is ordered by (-score, doc id), as
every gabarito run.

Known differences from :func:`gabarito.retrieval.fusion.rrf` on the same inputs (what the identity
check in the fusion study looks for): the sub-queries cut at ``depth`` in the server's order, so
documents tied at the cut may differ from the Python path, which asks for ``depth + tie_margin``
and orders ties by doc id; the server's scores are 32-bit floats, so two sums that are equal in
double precision can differ in the last place (and the reverse). A question with no searchable
term has no full-text source, and ``vector.fuse`` refuses a single source: its vector list (still
from the engine) is fused alone by the same function in Python, and the run counts such questions
(``single_source``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.core.runs import Run
from gabarito.progress import bar as progress_bar
from gabarito.retrieval.arcadedb.analyzers import lucene_escape
from gabarito.retrieval.protocol import Queries, asking

FUSIONS = {"rrf": "RRF", "dbsf": "DBSF", "linear": "LINEAR"}
OPTION_NAMES = {"fusion", "k", "weights", "limit"}


def fuse_sql(type_name: str, text_index: str, vector_index: str, option_names: Sequence[str] = ("fusion", "limit")) -> str:
    """The statement (see the module docstring); the options map names the given options, each
    bound as ``:opt_<name>`` (ArcadeDB reads a bound list inside a literal map, not inside a bound map)."""
    vector = f"(SELECT expand(vector.neighbors('{vector_index}', :v, :depth)))"
    text = (f"(SELECT @rid, doc_id, $score AS score FROM {type_name} "
            f"WHERE SEARCH_INDEX('{text_index}', :q) = true ORDER BY score DESC LIMIT :depth)")
    unknown = set(option_names) - OPTION_NAMES
    if unknown:
        raise GabaritoError(f"unknown vector.fuse option {sorted(unknown)[0]!r}")
    options = "{" + ", ".join(f"{name}: :opt_{name}" for name in option_names) + "}"
    return f"SELECT doc_id, score FROM (SELECT expand(vector.fuse({text}, {vector}, {options})))"


@dataclass
class NativeFusion:
    """Full text + vectors fused by ArcadeDB (``vector.fuse``), one round trip per question."""

    index: object  # an ArcadeIndex
    encoder: object
    fusion: str = "rrf"
    rrf_k: int = 60
    weights: Sequence[float] | None = None
    name: str = "native"
    model_id: str | None = None
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.fusion not in FUSIONS:
            raise GabaritoError(f"unknown native fusion {self.fusion!r}; valid: {', '.join(FUSIONS)}")
        if self.weights is not None and len(self.weights) != 2:
            raise GabaritoError(f"native fusion takes two weights (text, vector), not {list(self.weights)}")
        self.single_source = 0

    def options(self, depth: int) -> dict:
        opts: dict = {"fusion": FUSIONS[self.fusion], "limit": 2 * int(depth)}
        if self.fusion == "rrf":
            opts["k"] = int(self.rrf_k)
        if self.weights is not None:
            opts["weights"] = [float(w) for w in self.weights]
        return opts

    def _single_source(self, vector: np.ndarray, depth: int) -> list[tuple[str, float]]:
        """The vector list alone, fused by the same function in Python (see the module docstring)."""
        from gabarito.retrieval.fusion import rrf
        from gabarito.retrieval.fusion_functions import normalize

        self.single_source += 1
        pairs = self.index.knn(vector, depth, model_id=self.model_id)
        if self.fusion == "rrf":
            return rrf([[d for d, _ in pairs]], rrf_k=self.rrf_k)
        weight = self.weights[1] if self.weights is not None else 1.0
        norm = normalize(pairs, "dbsf" if self.fusion == "dbsf" else "minmax")
        return [(d, weight * s) for d, s in norm.items()]

    def search_one(self, text: str, vector: np.ndarray, depth: int) -> list[tuple[str, float]]:
        meta = self.index.info()
        vec = np.asarray(vector, dtype=np.float32)
        self.index.check_model(self.model_id or meta["model_id"], vec.shape[0])
        if not re.search(r"\w", text):  # Lucene rejects a query without a term
            return self._single_source(vec, depth)
        opts = self.options(depth)
        sql = fuse_sql(self.index.type_name, meta["text_index"], meta["vector_index"], list(opts))
        params = {"q": lucene_escape(self.index.clip(text)), "v": vec.tolist(), "depth": int(depth),
                  **{f"opt_{name}": value for name, value in opts.items()}}
        rows = self.index.client.query(sql, params)
        return [(r["doc_id"], float(r["score"])) for r in rows]

    def search(self, queries: Queries, depth: int) -> Run:
        vectors = queries.vectors(self.encoder)
        out = {}
        for i, (q, t) in enumerate(progress_bar(list(zip(queries.ids, queries.texts)), desc=f"searching {self.name}",
                                                unit="q")):
            with asking(q):  # a clipped question or a failed search names the question
                out[q] = self.search_one(t, vectors[i], depth)
        return Run(out, name=self.name)

    def provenance(self) -> dict:
        return {"name": self.name, "kind": "native fusion (ArcadeDB vector.fuse)", "fusion": self.fusion,
                "rrf_k": self.rrf_k if self.fusion == "rrf" else None,
                "weights": list(self.weights) if self.weights is not None else None,
                "single_source_questions": self.single_source, **self.info}
