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
  :func:`gabarito.measure.metrics.evaluate` (through the scorer, all queries in one call) on the
  query's whole ranked document list (every document of the ``chunk_depth`` chunks retrieved,
  not only the top ``k``), with its graded judgments when the evaluation has them.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.evaluation.config import HIT_AT
from gabarito.inputs.segment import Chunk, collapse_to_documents
from gabarito.core.runs import Qrels
from gabarito.measure.report import Report
from gabarito.measure.score import intervals, per_query_values, score_runs
from gabarito.measure.stats import DEFAULT_SEED

#: Measures added by default when questions have several relevant documents or graded judgments.
GRADED_DEFAULT = ("nDCG@10", "AP@100", "R@100")
#: The name of the one method of a run's :class:`~gabarito.measure.report.Report`.
METHOD = "run"


def grades_of(query) -> dict[str, int]:
    """The query's judgments: its graded ``relevance`` when the input had grades, else 1 per id.
    The loaders check the grades at the door (:mod:`gabarito.inputs.relevance`); a grade that is
    not an integer here (a query built by hand) is refused in one line, never rounded."""
    graded = (query.extra or {}).get("relevance") if hasattr(query, "extra") else None
    if isinstance(graded, Mapping) and graded:
        for doc, grade in graded.items():
            if isinstance(grade, bool) or not isinstance(grade, int):
                raise GabaritoError(f"the grade of {doc!r} is {grade!r}, not an integer", record=query.id)
        return {str(d): g for d, g in graded.items()}
    return {d: 1 for d in query.relevant_ids}


def default_measures(queries: Sequence) -> tuple[str, ...]:
    """:data:`GRADED_DEFAULT` when any query has several relevant documents or a grade above 1."""
    for q in queries:
        grades = grades_of(q)
        if len([g for g in grades.values() if g >= 1]) > 1 or any(g > 1 for g in grades.values()):
            return GRADED_DEFAULT
    return ()


def _row(query, all_docs: list[tuple[str, float]], best_chunk: Mapping[str, str], k: int) -> dict:
    """One row of the spreadsheet without its measures (filled in by :func:`query_rows`)."""
    returned = [{"id": d, "score": float(s), "segment": best_chunk[d]} for d, s in all_docs[:k]]
    ids = [r["id"] for r in returned]
    expected = list(query.relevant_ids)
    return {
        "id": query.id, "query": query.query, "type": query.type, "severity": query.severity,
        "answerable": bool(expected), "expected": expected, "returned": returned,
        "false_positive": ids[0] if ids and ids[0] not in set(expected) else "",
        "top_score": returned[0]["score"] if returned else None,
        "top_segment": returned[0]["segment"] if returned else "",
    }


def query_rows(queries: Sequence, run: Mapping[str, list[tuple[str, float]]], chunks_by_id: dict[str, Chunk],
               k: int, measures: Sequence[str] = ()) -> list[dict]:
    """The rows of every query (see the module docstring), scored in one call of the scorer
    (:func:`gabarito.measure.score.per_query_values`): ``hit@n`` and ``rr`` on the top ``k``
    returned documents against the expected ids, the named ``measures`` on each query's whole
    document list against its judgments. A value the scorer leaves out (a query with nothing
    relevant) is ``None``."""
    rows, top, deep, grades = [], {}, {}, {}
    for query in queries:
        ranked_chunks = run[query.id]
        all_docs = collapse_to_documents(ranked_chunks, chunks_by_id)
        best_chunk: dict[str, str] = {}
        for chunk_id, _ in ranked_chunks:
            best_chunk.setdefault(chunks_by_id[chunk_id].doc_id, chunk_id)
        row = _row(query, all_docs, best_chunk, k)
        rows.append(row)
        top[query.id] = [r["id"] for r in row["returned"]]
        deep[query.id] = [d for d, _ in all_docs]
        grades[query.id] = grades_of(query)
    hits = [f"hit@{n}" for n in HIT_AT if n <= k]
    shallow = per_query_values({"top": top}, Qrels.from_lists({r["id"]: r["expected"] for r in rows}),
                               [*hits, "RR"])["top"]
    graded = per_query_values({"deep": deep}, grades, measures)["deep"] if measures else {}
    for row in rows:
        qid, answerable = row["id"], row["answerable"]
        for n in HIT_AT:
            name = f"hit@{n}"
            row[name] = bool(shallow[name][qid]) if answerable and name in shallow else None
        row["rr"] = shallow["RR"][qid] if answerable else None
        if measures:
            row["measures"] = {m: values.get(qid) for m, values in graded.items()}
    return [_ordered(row) for row in rows]


def _ordered(row: dict) -> dict:
    """The row's keys in the record's order (hit@n and rr before false_positive)."""
    head = ("id", "query", "type", "severity", "answerable", "expected", "returned",
            *(f"hit@{n}" for n in HIT_AT), "rr", "false_positive", "top_score", "top_segment", "measures")
    return {key: row[key] for key in head if key in row}


def summary_measures(k: int, measures: Sequence[str] = ()) -> list[str]:
    """The measures of a run's summary, in the order they are resampled: ``hit@n`` (n <= k),
    ``RR@k``, then the run's named ``measures`` (each once)."""
    return list(dict.fromkeys([*(f"hit@{n}" for n in HIT_AT if n <= k), f"RR@{k}", *measures]))


def summary_report(rows: Sequence[dict], k: int, lists: Mapping[str, Sequence[str]],
                   judgments: Mapping[str, Mapping[str, int]], *, seed: int = DEFAULT_SEED,
                   measures: Sequence[str] = (), method: str = METHOD) -> Report | None:
    """The :class:`~gabarito.measure.report.Report` of the answerable ``rows`` (a study of one):
    :func:`gabarito.measure.score.score_runs` of each query's ranked document list ``lists[qid]``
    (the order as ranked) against ``judgments``, the queries resampled in the rows' order; None
    when no row is answerable."""
    order = [r["id"] for r in rows if r["answerable"]]
    if not order or not judged_as_expected(rows, judgments):
        return None
    qrels = Qrels({q: dict(judgments[q]) for q in order})
    run = {q: list(lists.get(q, ())) for q in order}
    return score_runs({method: run}, qrels, summary_measures(k, measures), seed=seed, order=order)


def judged_as_expected(rows: Sequence[dict], judgments: Mapping[str, Mapping[str, int]]) -> bool:
    """Whether each answerable row's expected ids are exactly its documents of grade >= 1 (always so
    for the loaders' inputs, which refuse grades that disagree with the relevant ids; a record or a
    caller's judgments made otherwise may not be)."""
    return all({d for d, g in judgments.get(r["id"], {}).items() if g >= 1} == set(r["expected"])
               for r in rows if r["answerable"])


def _cell(report: Report | None, measure: str, method: str = METHOD) -> dict | None:
    if report is None or measure not in report.measures:
        return None
    low, high = report.interval(method, measure)
    return {"value": report.mean(method, measure), "ci95": [low, high]}


def _group(rows: Sequence[dict], k: int, seed: int, measures: Sequence[str], lists, judgments) -> dict:
    answerable = [r for r in rows if r["answerable"]]
    out: dict[str, Any] = {"n_queries": len(rows), "n_answerable": len(answerable),
                           "n_unanswerable": len(rows) - len(answerable)}
    if lists is None:
        return {**out, **_from_rows(answerable, k, seed, measures)}
    report = summary_report(rows, k, lists, judgments, seed=seed, measures=measures)
    out.update({f"top{n}": _cell(report, f"hit@{n}") for n in HIT_AT})
    out["mrr"] = _cell(report, f"RR@{k}")
    if measures:
        out["measures"] = {m: _cell(report, m) for m in measures}
    return out


def _from_rows(answerable: Sequence[dict], k: int, seed: int, measures: Sequence[str]) -> dict:
    """The same figures from stored rows alone (no ranked lists: a results file written before),
    through the scorer's :func:`~gabarito.measure.score.intervals` of the rows' values."""
    named: dict[object, list[float]] = {f"top{n}": [float(r[f"hit@{n}"]) for r in answerable]
                                        for n in HIT_AT if n <= k}
    named["mrr"] = [float(r["rr"]) for r in answerable]
    named.update({("measure", m): [r["measures"][m] for r in answerable if r["measures"].get(m) is not None]
                  for m in measures})
    found = dict(zip(named, intervals(list(named.values()), seed=seed)))
    out: dict[str, Any] = {f"top{n}": found.get(f"top{n}") for n in HIT_AT}
    out["mrr"] = found["mrr"]
    if measures:
        out["measures"] = {m: found[("measure", m)] for m in measures}
    return out


def summarize(rows: Sequence[dict], k: int, *, seed: int = DEFAULT_SEED, measures: Sequence[str] = (),
              lists: Mapping[str, Sequence[str]] | None = None,
              judgments: Mapping[str, Mapping[str, int]] | None = None) -> dict:
    """Accuracy over the answerable queries and the top scores of the unanswerable ones.

    ``top1``/``top3``/``top5`` (share of answerable queries with a relevant document in the
    top n) and ``mrr`` (mean RR@k) are each ``{"value", "ci95": [low, high]}`` (percentile
    bootstrap over the queries in file order, fixed seed), or ``None`` when there is no
    answerable query or ``n > k``; ``measures`` holds the same for each named measure; with
    ``n_queries``/``n_answerable``/``n_unanswerable``, the same again per ``type`` in
    ``by_type`` and per ``severity`` in ``by_severity``; ``unanswerable_top_scores`` lists
    ``{"id", "top_score", "top_doc"}`` for each unanswerable query.

    With ``lists`` (each query's ranked document ids, as deep as searched) and ``judgments``
    (its grades), every figure is a :class:`~gabarito.measure.report.Report` of
    :func:`summary_report`, one per group; without them (stored rows only), the rows' own
    per-query values are averaged and resampled the same way."""
    if lists is not None and judgments is None:
        judgments = {r["id"]: {d: 1 for d in r["expected"]} for r in rows}
    if lists is not None and not judged_as_expected(rows, judgments):
        lists = None  # the rows' hits and the graded measures judge differently: each from its rows
    out = {"k": k, **_group(rows, k, seed, measures, lists, judgments)}
    for key in ("type", "severity"):
        groups: dict[str, list[dict]] = {}
        for r in rows:
            groups.setdefault(r[key], []).append(r)
        out[f"by_{key}"] = {name: _group(group, k, seed, measures, lists, judgments)
                            for name, group in groups.items()}
    out["unanswerable_top_scores"] = [
        {"id": r["id"], "top_score": r["top_score"], "top_doc": r["returned"][0]["id"] if r["returned"] else ""}
        for r in rows if not r["answerable"]
    ]
    return out
