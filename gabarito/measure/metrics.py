"""Per-query ranking measures and their evaluation over a run.

Data shapes:

* A *ranking* is either a list of doc ids, best first, or a list of
  ``(doc_id, score)`` pairs in any order.
* A *run* is ``{qid: ranking}``.
* *Qrels* are ``{qid: {doc_id: grade}}`` with integer grades; a grade >= 1
  means relevant, 0 (or less) means judged not relevant.

Conventions (stated here because evaluation tools differ on them):

* Ordering: pairs are sorted by score descending, ties broken by doc id
  **ascending**. trec_eval (and so pytrec_eval and ir_measures) breaks ties by
  doc id *descending*; results agree with those tools whenever scores are
  distinct. A list of plain ids is taken in the order given.
* A doc id may appear only once in a ranking (a duplicate is an error).
* Ranks are 1-based. A query whose ranking holds no relevant document within
  the cutoff scores zero, and so does an empty ranking.
* ``R@k`` is recall: relevant documents in the top ``k`` divided by all
  relevant documents of the query (with one relevant document per query it is
  the hit rate at ``k``). ``P@k`` divides by ``k`` even when fewer than ``k``
  documents were retrieved (as trec_eval does).
* ``hit@k`` is 1 when at least one relevant document is in the top ``k``, else 0 (ir_measures
  calls it ``Success@k``; top-k accuracy when averaged).
* ``RR@k`` is the reciprocal rank of the first relevant document, 0 when it is
  beyond rank ``k`` (MRR@10 averages ``RR@10``).
* ``nDCG@k`` uses the grade itself as gain (linear, like trec_eval's
  ``ndcg_cut``) and the discount ``1 / log2(1 + rank)``; the ideal ranking is
  the query's judged grades sorted descending.
* ``AP@k`` sums the precision at the rank of each relevant document found in
  the top ``k`` and divides by the number of relevant documents of the query
  (like trec_eval's ``map_cut`` and ir_measures ``AP@k``).
* :func:`evaluate` scores every query of the qrels that has at least one
  relevant document; a query missing from the run scores zero (trec_eval would
  skip it unless run with ``-c``). Queries of the qrels without any relevant
  document are excluded; their ids are in ``Evaluation.excluded``. Queries of
  the run that are absent from the qrels are ignored.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

from gabarito.core.columnar import ColumnarRun
from gabarito.core.runs import by_score
from gabarito.errors import GabaritoError
from gabarito.measure.columnar import evaluate_columns

Ranking = Sequence[str] | Sequence[tuple[str, float]]
Run = Mapping[str, Ranking]  # a gabarito.core.runs.Run, or any mapping of rankings
Qrels = Mapping[str, Mapping[str, int]]  # a gabarito.core.runs.Qrels, or any such mapping


def as_ranking(entries: Ranking) -> list[str]:
    """Doc ids best first: pairs sorted by (-score, doc id), plain ids kept in order."""
    items = list(entries)
    if items and not isinstance(items[0], str):
        items = [doc for doc, _ in by_score(items)]
    seen: set[str] = set()
    for doc in items:
        if doc in seen:
            raise GabaritoError(f"doc id {doc!r} appears twice in one ranking")
        seen.add(doc)
    return items


def _relevant(relevant: Iterable[str] | Mapping[str, int]) -> set[str]:
    """The relevant ids: a set as given, or the docs with grade >= 1 of a grades mapping."""
    if isinstance(relevant, Mapping):
        return {doc for doc, grade in relevant.items() if grade >= 1}
    if isinstance(relevant, str):
        return {relevant}
    return set(relevant)


def _check_k(k: int | None) -> None:
    if k is not None and k < 1:
        raise GabaritoError(f"cutoff k must be >= 1, got {k}")


def first_relevant_rank(ranking: Ranking, relevant: Iterable[str] | Mapping[str, int]) -> int | None:
    """1-based rank of the first relevant document, or None when none was retrieved."""
    rel = _relevant(relevant)
    for rank, doc in enumerate(as_ranking(ranking), start=1):
        if doc in rel:
            return rank
    return None


def rank_of(ranking: Ranking, doc: str) -> int | None:
    """1-based rank of ``doc`` in the ranking, or None when it was not retrieved."""
    return first_relevant_rank(ranking, {doc})


def hit_at(ranking: Ranking, relevant: Iterable[str] | Mapping[str, int], k: int) -> float:
    """1.0 when a relevant document is in the top ``k``, else 0.0."""
    _check_k(k)
    rank = first_relevant_rank(ranking, relevant)
    return float(rank is not None and rank <= k)


def recall_at(ranking: Ranking, relevant: Iterable[str] | Mapping[str, int], k: int) -> float:
    """Share of the relevant documents found in the top ``k`` (0 when none is relevant)."""
    _check_k(k)
    rel = _relevant(relevant)
    if not rel:
        return 0.0
    return len(rel.intersection(as_ranking(ranking)[:k])) / len(rel)


def precision_at(ranking: Ranking, relevant: Iterable[str] | Mapping[str, int], k: int) -> float:
    """Relevant documents in the top ``k`` divided by ``k``."""
    _check_k(k)
    rel = _relevant(relevant)
    return len(rel.intersection(as_ranking(ranking)[:k])) / k


def reciprocal_rank(ranking: Ranking, relevant: Iterable[str] | Mapping[str, int],
                    k: int | None = 10) -> float:
    """1 / rank of the first relevant document, 0 if it is beyond ``k`` (None = no cutoff)."""
    _check_k(k)
    rank = first_relevant_rank(ranking, relevant)
    return 0.0 if rank is None or (k is not None and rank > k) else 1.0 / rank


def ndcg_at(ranking: Ranking, grades: Mapping[str, int], k: int | None) -> float:
    """nDCG with linear gain (the grade) and discount 1/log2(1+rank); k=None means no cutoff."""
    _check_k(k)
    ids = as_ranking(ranking)
    top = ids[:k] if k is not None else ids
    dcg = sum(max(grades.get(doc, 0), 0) / math.log2(1 + rank)
              for rank, doc in enumerate(top, start=1))
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)
    ideal = ideal[:k] if k is not None else ideal
    idcg = sum(g / math.log2(1 + rank) for rank, g in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def average_precision(ranking: Ranking, relevant: Iterable[str] | Mapping[str, int],
                      k: int | None = None) -> float:
    """AP over the top ``k`` (all when None), normalised by the query's number of relevant docs."""
    _check_k(k)
    rel = _relevant(relevant)
    if not rel:
        return 0.0
    ids = as_ranking(ranking)
    found = 0
    total = 0.0
    for rank, doc in enumerate(ids[:k] if k is not None else ids, start=1):
        if doc in rel:
            found += 1
            total += found / rank
    return total / len(rel)


class Evaluation(dict):
    """``{measure: {qid: value}}``; ``excluded`` lists qrels queries with no relevant document."""

    def __init__(self, scores: dict[str, dict[str, float]], excluded: Sequence[str]):
        super().__init__(scores)
        self.excluded: list[str] = list(excluded)


def evaluate(run: Run | ColumnarRun, qrels: Qrels, measures: Sequence[str]) -> Evaluation:
    """Score every judged query with each measure; see the module docstring for conventions.

    The per-query values of each measure are keyed by query id in sorted order. The work is done
    over columns by :func:`gabarito.measure.columnar.evaluate_columns` (``run`` may also be a
    :class:`~gabarito.core.columnar.ColumnarRun`); the values are those of the per-query
    functions above."""
    judged, excluded, values = evaluate_columns(run, qrels, measures)
    return Evaluation({name: dict(zip(judged, array.tolist())) for name, array in values.items()}, excluded)


def mean(per_query: Mapping[str, float] | Sequence[float]) -> float:
    """Arithmetic mean of per-query values (a mapping's values or a sequence)."""
    values = list(per_query.values()) if isinstance(per_query, Mapping) else list(per_query)
    if not values:
        raise GabaritoError("cannot average zero queries")
    return math.fsum(values) / len(values)


def top1_overlap(ranks_a: Mapping[str, int | None], ranks_b: Mapping[str, int | None]) -> dict[str, int]:
    """Count queries whose gold is at rank 1 for both methods, only one of them, or neither.

    ``ranks_a`` and ``ranks_b`` map each qid to the gold's rank (None = not retrieved)
    and must cover the same queries.
    """
    if set(ranks_a) != set(ranks_b):
        missing = sorted(set(ranks_a) ^ set(ranks_b))
        raise GabaritoError(f"rank maps cover different queries, e.g. {missing[0]!r}")
    counts = {"both": 0, "only_a": 0, "only_b": 0, "neither": 0}
    for qid in ranks_a:
        a_first, b_first = ranks_a[qid] == 1, ranks_b[qid] == 1
        key = "both" if a_first and b_first else "only_a" if a_first else "only_b" if b_first else "neither"
        counts[key] += 1
    return counts
