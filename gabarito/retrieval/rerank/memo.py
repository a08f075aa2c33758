"""A reader that remembers: each (query, text) pair is scored once, however many first stages
and cut-offs ask for it again, and the time spent scoring new pairs is counted."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np


class MemoReader:
    """Wraps a :class:`~gabarito.retrieval.rerank.Reranker`; same ``name`` and ``provenance``.

    ``pairs_scored`` and ``seconds`` count only the pairs the wrapped reader actually read (the
    new ones, in batches of one call), so ``seconds / pairs_scored`` is its cost per pair.
    """

    def __init__(self, reader):
        self.reader = reader
        self.name = getattr(reader, "name", type(reader).__name__)
        self._scores: dict[tuple[str, str], float] = {}
        self.pairs_scored = 0
        self.seconds = 0.0

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        new = sorted({t for t in texts if (query, t) not in self._scores})
        if new:
            t0 = time.perf_counter()
            scores = self.reader.score(query, new)
            self.seconds += time.perf_counter() - t0
            self.pairs_scored += len(new)
            self._scores.update({(query, t): float(s) for t, s in zip(new, scores)})
        return np.array([self._scores[(query, t)] for t in texts], dtype=np.float64)

    def provenance(self) -> dict:
        return self.reader.provenance()
