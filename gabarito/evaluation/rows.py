"""Per-query rows of an evaluation run and their summary, computed by the one measurement spine.

Conventions (the run record's):

* A query is *answerable* when its relevant ids are not empty. ``hit@n`` is whether a relevant
  document is among the first ``n`` returned (``None`` when ``n > k``: a run that kept fewer
  documents cannot tell); ``rr`` is 1/rank of the first relevant document, 0 when none is in
  the top ``k``. Both are ``None`` for unanswerable queries, which are left out of every
  accuracy figure; their ``top_score`` is kept in the summary, to choose a score threshold.
* ``false_positive`` is the top-1 document when it is not relevant (for an unanswerable query:
  whatever came first), else ``""``.
* ``measures`` (when the run asks for any, see :data:`GRADED_DEFAULT`): each named measure of
  :func:`gabarito.measure.metrics.evaluate` on the query's whole ranked document list (every
  document of the ``chunk_depth`` chunks retrieved, not only the top ``k``), with its graded
  judgments when the evaluation has them.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from gabarito.evaluation.config import HIT_AT
from gabarito.inputs.segment import Chunk, collapse_to_documents
from gabarito.measure import metrics
from gabarito.measure.score import intervals
from gabarito.measure.stats import DEFAULT_SEED

#: Measures added by default when questions have several relevant documents or graded judgments.
GRADED_DEFAULT = ("nDCG@10", "AP@100", "R@100")


def grades_of(query) -> dict[str, int]:
    """The query's judgments: its graded ``relevance`` when the input had grades, else 1 per id."""
    graded = (query.extra or {}).get("relevance") if hasattr(query, "extra") else None
    if isinstance(graded, Mapping) and graded:
        return {str(d): int(g) for d, g in graded.items()}
    return {d: 1 for d in query.relevant_ids}


def default_measures(queries: Sequence) -> tuple[str, ...]:
    """:data:`GRADED_DEFAULT` when any query has several relevant documents or a grade above 1."""
    for q in queries:
        grades = grades_of(q)
        if len([g for g in grades.values() if g >= 1]) > 1 or any(g > 1 for g in grades.values()):
            return GRADED_DEFAULT
    return ()


def query_row(query, ranked_chunks: list[tuple[str, float]], chunks_by_id: dict[str, Chunk], k: int,
              measures: Sequence[str] = ()) -> dict:
    """One row of the spreadsheet (see the module docstring)."""
    all_docs = collapse_to_documents(ranked_chunks, chunks_by_id)
    docs = all_docs[:k]
    best_chunk: dict[str, str] = {}
    for chunk_id, _ in ranked_chunks:
        best_chunk.setdefault(chunks_by_id[chunk_id].doc_id, chunk_id)
    returned = [{"id": d, "score": float(s), "segment": best_chunk[d]} for d, s in docs]
    ids = [r["id"] for r in returned]
    expected = list(query.relevant_ids)
    answerable = bool(expected)
    row: dict[str, Any] = {
        "id": query.id, "query": query.query, "type": query.type, "severity": query.severity,
        "answerable": answerable, "expected": expected, "returned": returned,
    }
    for n in HIT_AT:
        row[f"hit@{n}"] = (bool(metrics.hit_at(ids, expected, n)) if n <= k else None) if answerable else None
    row["rr"] = metrics.reciprocal_rank(ids, expected, None) if answerable else None
    row["false_positive"] = ids[0] if ids and ids[0] not in set(expected) else ""
    row["top_score"] = returned[0]["score"] if returned else None
    row["top_segment"] = returned[0]["segment"] if returned else ""
    if measures:
        deep = [d for d, _ in all_docs]
        values = metrics.evaluate({query.id: deep}, {query.id: grades_of(query)}, measures)
        row["measures"] = {m: (v[query.id] if query.id in v else None) for m, v in values.items()}
    return row


def _group(rows: Sequence[dict], k: int, seed: int, measures: Sequence[str]) -> dict:
    answerable = [r for r in rows if r["answerable"]]
    out: dict[str, Any] = {"n_queries": len(rows), "n_answerable": len(answerable),
                           "n_unanswerable": len(rows) - len(answerable)}
    named: dict[object, list[float]] = {f"top{n}": [float(r[f"hit@{n}"]) for r in answerable]
                                        for n in HIT_AT if n <= k}
    named["mrr"] = [float(r["rr"]) for r in answerable]
    named.update({("measure", m): [r["measures"][m] for r in answerable if r["measures"].get(m) is not None]
                  for m in measures})
    # One call: the series of one length share one bootstrap draw (same numbers, far faster).
    found = dict(zip(named, intervals(list(named.values()), seed=seed)))
    out.update({f"top{n}": found.get(f"top{n}") for n in HIT_AT})
    out["mrr"] = found["mrr"]
    if measures:
        out["measures"] = {m: found[("measure", m)] for m in measures}
    return out


def summarize(rows: Sequence[dict], k: int, *, seed: int = DEFAULT_SEED, measures: Sequence[str] = ()) -> dict:
    """Accuracy over the answerable queries and the top scores of the unanswerable ones.

    ``top1``/``top3``/``top5`` (share of answerable queries with a relevant document in the
    top n) and ``mrr`` (mean RR@k) are each ``{"value", "ci95": [low, high]}`` (percentile
    bootstrap over the queries in file order, fixed seed), or ``None`` when there is no
    answerable query or ``n > k``; ``measures`` holds the same for each named measure; with
    ``n_queries``/``n_answerable``/``n_unanswerable``, the same again per ``type`` in
    ``by_type`` and per ``severity`` in ``by_severity``; ``unanswerable_top_scores`` lists
    ``{"id", "top_score", "top_doc"}`` for each unanswerable query."""
    out = {"k": k, **_group(rows, k, seed, measures)}
    for key in ("type", "severity"):
        groups: dict[str, list[dict]] = {}
        for r in rows:
            groups.setdefault(r[key], []).append(r)
        out[f"by_{key}"] = {name: _group(group, k, seed, measures) for name, group in groups.items()}
    out["unanswerable_top_scores"] = [
        {"id": r["id"], "top_score": r["top_score"], "top_doc": r["returned"][0]["id"] if r["returned"] else ""}
        for r in rows if not r["answerable"]
    ]
    return out
