"""A second reader that answers from scores computed beforehand.

One pass of a costly reader over every (question, candidate text) pair can then serve every first
stage and every depth ``N`` of a study: :class:`ScoreTable` follows the reader protocol of
:mod:`gabarito.retrieval.rerank` (``name``, ``score(query, texts)``, ``provenance()``), so
:func:`gabarito.retrieval.pipeline.second_reading` orders candidates with it exactly as it would
with the live reader (same tie rule). A text that was not scored for a query is an error, never a
silent zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from gabarito.errors import GabaritoError

__all__ = ["ScoreTable"]


class ScoreTable:
    """A reader whose scores were computed beforehand: ``scores[query][text] = float``.

    ``source`` is the live reader's provenance (recorded, not used)."""

    def __init__(self, name: str, scores: Mapping[str, Mapping[str, float]], *, source: Mapping | None = None):
        self.name = str(name)
        self.scores = {q: dict(row) for q, row in scores.items()}
        self.source = dict(source or {})

    @classmethod
    def compute(cls, reader, queries: Iterable[str], texts: Sequence[str], *, name: str | None = None) -> ScoreTable:
        """Score every text against every (distinct) query.

        Readers whose text side does not depend on the query are encoded once, with the reader's
        own methods and the same arithmetic as its ``score``: a MaxSim reader (``kind ==
        "maxsim"``: ``token_vectors`` of the texts once, then the sum over query tokens of the best
        cosine) and a sparse reader (``kind == "sparse"``: ``encode_documents`` once, then a dot
        product with ``encode_query``). Any other reader (a cross-encoder, a bi-encoder with its
        own cache) is called with ``reader.score(query, texts)`` once per query."""
        texts = list(dict.fromkeys(texts))
        queries = list(dict.fromkeys(queries))
        label = getattr(reader, "name", type(reader).__name__)
        score = _scorer(reader, texts)
        table: dict[str, dict[str, float]] = {}
        for query in queries:
            values = score(query)
            if values.size != len(texts):
                raise GabaritoError(f"reader {label!r} returned {values.size} scores for {len(texts)} texts")
            if not np.all(np.isfinite(values)):
                raise GabaritoError(f"reader {label!r} returned a NaN or infinite score")
            table[query] = {t: float(v) for t, v in zip(texts, values)}
        return cls(name or label, table, source=reader.provenance() if hasattr(reader, "provenance") else None)

    def provenance(self) -> dict:
        return {**self.source, "scored_beforehand": True}

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        row = self.scores.get(query)
        if row is None:
            raise GabaritoError(f"{self.name}: no scores for the query {query[:60]!r}")
        out = np.empty(len(texts), dtype=np.float64)
        for i, text in enumerate(texts):
            try:
                out[i] = row[text]
            except KeyError:
                raise GabaritoError(f"{self.name}: the text {text[:60]!r} was not scored for the query "
                                    f"{query[:60]!r}") from None
        return out


def _scorer(reader, texts: list[str]):
    """``fn(query) -> scores of texts``, encoding the text side once when the reader allows it."""
    kind = getattr(reader, "kind", None)
    if kind == "maxsim":
        docs = reader.token_vectors([reader.document_prefix + t for t in texts])

        def maxsim(query: str) -> np.ndarray:
            q = reader.token_vectors([reader.query_prefix + query])[0]
            return np.array([float((q @ d.T).max(axis=1).sum()) if len(d) and len(q) else 0.0 for d in docs])
        return maxsim
    if kind == "sparse":
        matrix = reader.encode_documents(texts)

        def sparse(query: str) -> np.ndarray:
            return np.asarray((matrix @ reader.encode_query(query).T).toarray()).reshape(-1)
        return sparse

    def live(query: str) -> np.ndarray:
        return np.asarray(reader.score(query, texts), dtype=np.float64).reshape(-1)
    return live
