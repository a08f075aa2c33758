"""BM25 parity: an in-process reference (bm25s) matched to ArcadeDB's FULL_TEXT index, and
measures of how far two rankings agree.

What ArcadeDB 26.10 computes (read from ``arcadedb-engine-26.10.2.jar``:
``com.arcadedb.index.fulltext.BM25Scorer``, ``FullTextIndexMetadata``, ``FullTextQueryExecutor``):

* ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` and
  ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))`` per query term, summed; ``tf`` and
  ``dl`` (the document's number of tokens after analysis) are stored exactly in each posting;
* defaults ``k1 = 1.2``, ``b = 0.75`` (``DEFAULT_BM25_K1``/``DEFAULT_BM25_B``; FULL_TEXT
  METADATA keys ``bm25_k1``, ``bm25_b``);
* query terms are collected into a map, so a term repeated in the question counts once;
* the default analyzer is Lucene's ``StandardAnalyzer``: the Unicode word-break rules of
  UAX #29 (``StandardTokenizer``), lower case, and (since Lucene 8) no stop words.

bm25s with ``method="lucene"`` uses the same idf and the same saturation without the constant
factor ``k1 + 1`` (which changes no ranking; :class:`BM25Reference` multiplies it back so the
scores are comparable). :func:`gabarito.retrieval.analyzer.lucene_standard_tokens` reproduces the StandardAnalyzer with the
``regex`` module's UAX #29 word boundaries. Tokens longer than 255 characters (which Lucene
splits) and emoji (which Lucene keeps) are the known differences; neither occurs in the classic
collections.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.measure import metrics
from gabarito.retrieval.analyzer import lucene_standard_tokens

#: ArcadeDB's FULL_TEXT defaults (FullTextIndexMetadata.DEFAULT_BM25_K1 / DEFAULT_BM25_B).
ARCADEDB_BM25_K1 = 1.2
ARCADEDB_BM25_B = 0.75

class BM25Reference:
    """bm25s over ``docs`` with ArcadeDB's scoring: Lucene idf, ``k1``/``b`` as given, questions
    reduced to distinct terms, scores multiplied by ``k1 + 1``, ties broken by doc id.

    ``tokenizer`` defaults to :func:`lucene_standard_tokens` (ArcadeDB's standard analyzer)."""

    def __init__(self, docs: Mapping[str, str], *, k1: float = ARCADEDB_BM25_K1, b: float = ARCADEDB_BM25_B,
                 tokenizer=lucene_standard_tokens):
        try:
            import bm25s
        except ImportError as exc:
            raise GabaritoError("bm25s is not installed (pip install 'bm25s>=0.2')") from exc
        if not docs:
            raise GabaritoError("BM25Reference needs at least one document")
        self.k1, self.b = float(k1), float(b)
        self.tokenizer = tokenizer
        self.ids = list(docs)
        self.version = getattr(bm25s, "__version__", "unknown")
        self.retriever = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        self.retriever.index([tokenizer(docs[i]) for i in self.ids], show_progress=False)
        self._order = np.argsort(np.array(self.ids, dtype=object), kind="stable")  # doc-id ranks
        self._id_rank = np.empty(len(self.ids), dtype=np.int64)
        self._id_rank[self._order] = np.arange(len(self.ids))

    def query_terms(self, question: str) -> list[str]:
        """The question's distinct tokens that occur in the corpus, in first-seen order."""
        vocab = self.retriever.vocab_dict
        return [t for t in dict.fromkeys(self.tokenizer(question)) if t in vocab]

    def scores(self, question: str) -> np.ndarray:
        terms = self.query_terms(question)
        if not terms:
            return np.zeros(len(self.ids), dtype=np.float64)
        return np.asarray(self.retriever.get_scores(terms), dtype=np.float64) * (self.k1 + 1.0)

    def search(self, question: str, k: int) -> list[tuple[str, float]]:
        """Top ``k`` documents with a positive score: score descending, then doc id ascending."""
        if k <= 0:
            return []
        s = self.scores(question)
        hits = np.flatnonzero(s > 0)
        if hits.size == 0:
            return []
        order = np.lexsort((self._id_rank[hits], -s[hits]))[:k]
        return [(self.ids[i], float(s[i])) for i in hits[order]]


def _ids(ranking) -> list[str]:
    return metrics.as_ranking(ranking)


def topk_agreement(a: Sequence, b: Sequence, k: int = 10) -> dict[str, float | bool]:
    """Agreement of two rankings' top ``k``: Jaccard of the sets, overlap ``|A & B| / k``, and
    whether the lists are identical (same ids in the same order) or hold the same set."""
    if k < 1:
        raise GabaritoError(f"k must be >= 1, got {k}")
    la, lb = _ids(a)[:k], _ids(b)[:k]
    sa, sb = set(la), set(lb)
    union = sa | sb
    return {"jaccard": len(sa & sb) / len(union) if union else 1.0,
            "overlap": len(sa & sb) / k,
            "identical": la == lb,
            "same_set": sa == sb}


def score_agreement(a: Sequence[tuple[str, float]], b: Sequence[tuple[str, float]]) -> float | None:
    """Largest relative score difference over the documents both rankings hold (None if none)."""
    a, b = list(a), list(b)
    if not a or not b or isinstance(a[0], str) or isinstance(b[0], str):
        return None  # plain id lists carry no scores
    sb = dict(b)
    worst = None
    for doc, score in a:
        if doc in sb:
            ref = max(abs(sb[doc]), 1e-12)
            diff = abs(score - sb[doc]) / ref
            worst = diff if worst is None else max(worst, diff)
    return worst


def parity(run_a: Mapping[str, Sequence], run_b: Mapping[str, Sequence], ndcg_a: Mapping[str, float],
           ndcg_b: Mapping[str, float], *, k: int = 10, tolerance: float = 0.005) -> dict:
    """Per-collection parity of two runs over the queries of ``ndcg_a`` (the judged ones).

    Returns mean Jaccard and overlap of the top ``k``, the share (and count) of queries with
    identical top ``k`` lists and with the same top-``k`` set, the mean nDCG of each run and
    their difference ``a - b``, the largest per-query nDCG difference, the largest relative
    score difference on shared documents, and ``target_met`` = ``|difference| <= tolerance``."""
    qids = sorted(ndcg_a)
    if sorted(ndcg_b) != qids:
        raise GabaritoError("the two nDCG maps cover different queries")
    if not qids:
        raise GabaritoError("parity needs at least one query")
    rows = {q: topk_agreement(run_a.get(q, []), run_b.get(q, []), k) for q in qids}
    score_diffs = [d for q in qids
                   if (d := score_agreement(list(run_a.get(q, []))[:k], list(run_b.get(q, []))[:k])) is not None]
    mean_a, mean_b = metrics.mean([ndcg_a[q] for q in qids]), metrics.mean([ndcg_b[q] for q in qids])
    diff = mean_a - mean_b
    identical = sum(r["identical"] for r in rows.values())
    same_set = sum(r["same_set"] for r in rows.values())
    return {
        "k": k,
        "n_queries": len(qids),
        "mean_jaccard": metrics.mean([r["jaccard"] for r in rows.values()]),
        "mean_overlap": metrics.mean([r["overlap"] for r in rows.values()]),
        "identical_topk": identical,
        "identical_topk_share": identical / len(qids),
        "same_set_topk": same_set,
        "same_set_topk_share": same_set / len(qids),
        "ndcg_a": mean_a,
        "ndcg_b": mean_b,
        "ndcg_diff": diff,
        "max_abs_query_ndcg_diff": max(abs(ndcg_a[q] - ndcg_b[q]) for q in qids),
        "max_rel_score_diff": max(score_diffs) if score_diffs else None,
        "tolerance": tolerance,
        "target_met": bool(abs(diff) <= tolerance and math.isfinite(diff)),
        "differing_queries": [q for q in qids if not rows[q]["identical"]],
    }
