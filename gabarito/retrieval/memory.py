"""In-memory reference engine: exact cosine kNN (numpy) and a plain Okapi BM25.

It is the yardstick the database is checked against (ANN recall of the vector
index against exact search) and the engine used when no server is wanted
(``--engine memory``). Ranking ties are broken by document id.

BM25 comes in two flavours that differ in one point only, how a question's repeated word counts
(:class:`BM25`, ``repeated_terms``):

* ``"each"`` (the class default; what the study scripts' training negatives use, kept so that
  committed runs reproduce): a word
  written twice in the question counts twice, as in Lucene's classic ``BooleanQuery`` of one SHOULD
  clause per word; the score drops BM25's constant ``k1 + 1``, as Lucene >= 8 does.
* ``"once"`` (:func:`arcadedb_bm25`, what ``gabarito evaluate --engine memory`` uses): each
  distinct word once and ``k1 + 1`` kept, which is what ArcadeDB's FULL_TEXT index computes with its
  StandardAnalyzer (exact document lengths, not Lucene's one-byte norms; Lucene's idf; k1=1.2,
  b=0.75; no stop words, no stemming). ArcadeDB is the reference; on CISI this engine returns its
  ranked lists and its scores to float32 precision (``case-studies/peers/bm25_alignment.json``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Mapping, Sequence

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.core.runs import by_score
from gabarito.retrieval.analyzer import lucene_standard_tokens

_TOKEN = re.compile(r"\w+", re.UNICODE)

#: Lucene's classic English stop set (what ArcadeDB's standard analyzer has used historically).
ENGLISH_STOP = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then "
    "there these they this to was will with".split()
)


def tokenize(text: str, stop: frozenset[str] = frozenset()) -> list[str]:
    """Lower-case tokens as ArcadeDB's standard (Lucene) analyzer splits them -- UAX #29 word
    boundaries, so ``foo:bar`` and ``e.g`` stay one token as they do in the database -- minus ``stop``."""
    return [t for t in lucene_standard_tokens(text) if t not in stop]


def without_stop_words(text: str, stop: frozenset[str] = ENGLISH_STOP) -> str:
    """The text's words minus stop words, joined by spaces (punctuation dropped)."""
    return " ".join(t for t in _TOKEN.findall(text) if t.lower() not in stop)


def _ranked(ids: Sequence[str], scores: np.ndarray, k: int) -> list[tuple[str, float]]:
    order = sorted(range(len(ids)), key=lambda i: (-float(scores[i]), ids[i]))
    return [(ids[i], float(scores[i])) for i in order[:k]]


class ExactVectors:
    """Brute-force cosine search over L2-normalised vectors."""

    def __init__(self, ids: Sequence[str], vectors: np.ndarray, *, model_id: str = ""):
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(ids) != len(vectors):
            raise GabaritoError(f"need one vector per id: {len(ids)} ids, shape {vectors.shape}")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.ids = list(ids)
        self.vectors = vectors / np.where(norms == 0, 1, norms)
        self.model_id = model_id
        self.dim = vectors.shape[1]

    def check_model(self, model_id: str, dim: int) -> None:
        if (self.model_id and model_id != self.model_id) or dim != self.dim:
            raise GabaritoError(
                f"query model {model_id} ({dim} dims) differs from the index's {self.model_id} ({self.dim} dims)"
            )

    def knn(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        vector = np.asarray(vector, dtype=np.float32)
        if vector.shape != (self.dim,):
            raise GabaritoError(f"query vector has {vector.shape[-1]} dims, the index has {self.dim}")
        return _ranked(self.ids, self.vectors @ vector, k)


#: How a question's repeated word counts in :class:`BM25`: ``"each"`` occurrence, or ``"once"``.
REPEATED_TERMS = ("each", "once")


class BM25:
    """Okapi BM25 (Robertson & Zaragoza 2009) with Lucene's idf, over concatenated fields.

    ``repeated_terms="each"`` counts a question's word per occurrence and drops the constant
    ``k1 + 1`` (Lucene's classic query); ``"once"`` counts each distinct word once and keeps
    ``k1 + 1`` (ArcadeDB's FULL_TEXT scoring: see :func:`arcadedb_bm25`)."""

    def __init__(self, docs: Mapping[str, str], *, k1: float = 1.2, b: float = 0.75,
                 stop: frozenset[str] = ENGLISH_STOP, repeated_terms: str = "each"):
        if repeated_terms not in REPEATED_TERMS:
            raise GabaritoError(f"repeated_terms must be one of {REPEATED_TERMS}, not {repeated_terms!r}")
        self.k1, self.b, self.stop, self.repeated_terms = k1, b, stop, repeated_terms
        self.ids = list(docs)
        self.tf = [Counter(tokenize(docs[i], stop)) for i in self.ids]
        self.len = np.array([sum(c.values()) for c in self.tf], dtype=np.float64)
        self.avgdl = float(self.len.mean()) if len(self.len) else 0.0
        df: Counter = Counter()
        for c in self.tf:
            df.update(c.keys())
        n = len(self.ids)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, c in enumerate(self.tf):
            for t, f in c.items():
                self.postings.setdefault(t, []).append((i, f))

    def query_terms(self, query: str) -> list[str]:
        """The question's words as they are scored: every occurrence, or each distinct word once."""
        terms = tokenize(query, self.stop)
        return list(dict.fromkeys(terms)) if self.repeated_terms == "once" else terms

    def scores(self, query: str) -> np.ndarray:
        s = np.zeros(len(self.ids))
        norm = self.k1 * (1 - self.b + self.b * self.len / (self.avgdl or 1))
        scale = self.k1 + 1 if self.repeated_terms == "once" else 1.0  # Lucene >= 8 drops k1 + 1; ArcadeDB keeps it
        for t in self.query_terms(query):
            for i, f in self.postings.get(t, ()):
                s[i] += self.idf[t] * f * scale / (f + norm[i])
        return s

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The score of each ``(query, doc id)`` pair, scoring each distinct query once."""
        at = {d: i for i, d in enumerate(self.ids)}
        memo: dict[str, np.ndarray] = {}
        out = []
        for query, doc in pairs:
            if query not in memo:
                memo[query] = self.scores(query)
            out.append(float(memo[query][at[doc]]))
        return out

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        s = self.scores(query)
        hits = by_score((i, x) for i, x in zip(self.ids, s) if x > 0)
        return [(i, float(x)) for i, x in hits[:k]]


def arcadedb_bm25(docs: Mapping[str, str]) -> BM25:
    """The in-memory BM25 that scores as ArcadeDB's FULL_TEXT index with the StandardAnalyzer:
    no stop words, each distinct question word once, ``k1 + 1`` kept."""
    return BM25(docs, stop=frozenset(), repeated_terms="once")
