"""The evaluation core: every measure of :mod:`gabarito.measure.metrics` over a columnar run.

A run becomes rows (:class:`~gabarito.core.columnar.ColumnarRun`) of the judged queries only; the
rows are ranked by the tie rule (one ``lexsort``, skipped when the rows already come grouped and
in order, as a :class:`~gabarito.core.runs.Run`'s do); each row's grade is found by a join on
(query, doc) -- a hash of the doc id's code points, confirmed on the text -- and only the rows of
relevant documents (the hits) reach the measures, which are array operations over queries.

Values equal the per-query definitions of :mod:`gabarito.measure.metrics` bit for bit: counts and
ranks are integers, the discount is ``math.log2(1 + rank)`` and the sums of nDCG and AP are taken
left to right in rank order (as the per-query loops and Python's ``sum`` of floats do).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from gabarito.core.columnar import ColumnarRun, doc_hash, repeated_docs
from gabarito.core.measures import Measure
from gabarito.core.runs import Run
from gabarito.errors import GabaritoError

_FILTER_SIZE = 1 << 20
_FILTER_MASK = np.uint64(_FILTER_SIZE - 1)


def judged_queries(qrels: Mapping[str, Mapping[str, int]]) -> tuple[list[str], list[str]]:
    """Sorted ids of the queries with a relevant document (grade >= 1), and of the others."""
    judged = sorted(q for q, grades in qrels.items() if any(g >= 1 for g in grades.values()))
    return judged, sorted(set(qrels) - set(judged))


class _Gains:
    """The positive grades of the judged queries as rows: ``query`` (judged index), ``docs``
    (doc ids), ``gain`` (the grade, float), with ``n_rel`` (grade >= 1) per query."""

    def __init__(self, qrels: Mapping[str, Mapping[str, int]], judged: Sequence[str]):
        query, docs, gains = [], [], []
        self.n_rel = np.zeros(len(judged), dtype=np.int64)
        for j, qid in enumerate(judged):
            for doc, grade in qrels[qid].items():
                if grade > 0:
                    query.append(j), docs.append(str(doc)), gains.append(grade)
                    self.n_rel[j] += grade >= 1
        self.query = np.asarray(query, dtype=np.int64)
        self.docs = np.empty(len(docs), dtype=object)
        self.docs[:] = docs
        self.gain = np.asarray(gains, dtype=np.float64)


def _rows(run, judged: Sequence[str]) -> tuple[ColumnarRun, bool]:
    """The rows of the judged queries (queries renumbered to their judged index), and whether
    the doc ids are known unique per query (a :class:`Run` checks that when built)."""
    if isinstance(run, ColumnarRun):
        index = {q: j for j, q in enumerate(judged)}
        to_judged = np.array([index.get(q, -1) for q in run.queries], dtype=np.int64)
        query = to_judged[run.query] if len(run) else np.zeros(0, dtype=np.int64)
        keep = query >= 0
        return ColumnarRun(np.asarray(judged, dtype=object), query[keep], run.docs[keep], run.score[keep]), False
    present = [q for q in judged if q in run]
    cols = ColumnarRun.from_run(run, present)
    positions = {q: j for j, q in enumerate(judged)}
    renumber = np.array([positions[q] for q in present], dtype=np.int64)
    query = renumber[cols.query] if len(cols) else cols.query
    return ColumnarRun(np.asarray(judged, dtype=object), query, cols.docs, cols.score), isinstance(run, Run)


def _ranked(query: np.ndarray, score: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, rank)``: rows grouped by query and best first by the tie rule, and each ordered
    row's 1-based rank. Rows already grouped and in order are not sorted again."""
    n = len(query)
    same = query[1:] == query[:-1]
    starts = np.flatnonzero(np.r_[True, ~same]) if n else np.zeros(0, dtype=np.int64)
    in_order = len(np.unique(query[starts])) == len(starts)
    if in_order and n > 1:
        tie = np.flatnonzero(same & ~(score[:-1] > score[1:]))
        in_order = bool(np.all(score[tie] == score[tie + 1]) and np.all(docs[tie] < docs[tie + 1]))
    if in_order:
        order = np.arange(n)
    else:
        text = docs.astype(str) if n else np.zeros(0, dtype="U1")
        order = np.lexsort((text, -score, query))
        query = query[order]
        starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if n else starts
    rank = np.arange(1, n + 1) - np.repeat(starts, np.diff(np.r_[starts, n]))
    return order, rank


def _grades(query: np.ndarray, docs: np.ndarray, gains: _Gains) -> np.ndarray:
    """The gain of each row (0 when the doc is not a positive grade of its query): a join on
    (query, hash of the doc id), every match confirmed on the ids."""
    out = np.zeros(len(query), dtype=np.float64)
    if not len(gains.query) or not len(query):
        return out
    keys, qkeys = doc_hash(docs, query), doc_hash(gains.docs, gains.query)
    by_key = np.argsort(qkeys, kind="stable")
    sorted_keys = qkeys[by_key]
    if np.any(sorted_keys[1:] == sorted_keys[:-1]):
        return _grades_by_dict(query, docs, gains)
    seen = np.zeros(_FILTER_SIZE, dtype=bool)  # a one-hash Bloom filter: most rows stop here
    seen[qkeys & _FILTER_MASK] = True
    maybe = np.flatnonzero(seen[keys & _FILTER_MASK])
    at = np.minimum(np.searchsorted(sorted_keys, keys[maybe]), len(sorted_keys) - 1)
    found = sorted_keys[at] == keys[maybe]
    hit, match = maybe[found], by_key[at[found]]
    if not (np.all(gains.query[match] == query[hit]) and np.all(gains.docs[match] == docs[hit])):
        return _grades_by_dict(query, docs, gains)
    out[hit] = gains.gain[match]
    return out


def _grades_by_dict(query: np.ndarray, docs: np.ndarray, gains: _Gains) -> np.ndarray:
    """:func:`_grades` by a dict lookup per row (taken only when two keys collide)."""
    table = {(q, d): g for q, d, g in zip(gains.query.tolist(), gains.docs.tolist(), gains.gain.tolist())}
    return np.array([table.get((q, d), 0.0) for q, d in zip(query.tolist(), docs.tolist())], dtype=np.float64)


def _sums_in_order(group: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per-group sums of ``values`` taken left to right (``group`` ascending, values in order
    within a group), exactly as a running ``total += value`` per group would give."""
    total = np.zeros(n, dtype=np.float64)
    if not len(group):
        return total
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    position = np.arange(len(group)) - np.repeat(starts, np.diff(np.r_[starts, len(group)]))
    by_position = np.lexsort((group, position))
    group, values, position = group[by_position], values[by_position], position[by_position]
    bounds = np.r_[0, np.flatnonzero(position[1:] != position[:-1]) + 1, len(group)]
    for a, b in zip(bounds[:-1], bounds[1:]):
        total[group[a:b]] += values[a:b]
    return total


def _discount(ranks: np.ndarray) -> np.ndarray:
    """``math.log2(1 + rank)`` per rank (Python's libm value, so nDCG matches the loop)."""
    top = int(ranks.max()) if len(ranks) else 0
    table = np.array([1.0] + [math.log2(1 + r) for r in range(1, top + 1)], dtype=np.float64)
    return table[ranks]


class _Hits:
    """The ranked rows of relevant documents (positive grade), sorted by (query, rank)."""

    def __init__(self, run, qrels: Mapping[str, Mapping[str, int]], judged: Sequence[str]):
        rows, unique = _rows(run, judged)
        self.n = len(judged)
        self.gains = _Gains(qrels, judged)
        if not unique:
            twice = np.flatnonzero(repeated_docs(rows.query, rows.docs))
            if len(twice):
                i = int(twice[0])
                raise GabaritoError(f"doc id {rows.docs[i]!r} appears twice in one ranking",
                                    record=judged[rows.query[i]])
        order, rank = _ranked(rows.query, rows.score, rows.docs)
        query = rows.query[order]
        gain = _grades(query, rows.docs[order], self.gains)
        keep = np.flatnonzero(gain > 0)
        self.query, self.rank, self.gain = query[keep], rank[keep], gain[keep]
        by = np.lexsort((self.rank, self.query))
        self.query, self.rank, self.gain = self.query[by], self.rank[by], self.gain[by]

    def within(self, k: int | None, *, relevant: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(query, rank, gain)`` of the hits at rank <= k (all when None); only grade >= 1
        unless ``relevant`` is False."""
        mask = np.ones(len(self.query), dtype=bool) if k is None else self.rank <= k
        if relevant:
            mask &= self.gain >= 1
        return self.query[mask], self.rank[mask], self.gain[mask]

    def first_rank(self) -> np.ndarray:
        """Rank of each query's first relevant document (0 when none was retrieved)."""
        query, rank, _ = self.within(None)
        out = np.zeros(self.n, dtype=np.int64)
        first = np.r_[True, query[1:] != query[:-1]] if len(query) else np.zeros(0, dtype=bool)
        out[query[first]] = rank[first]
        return out


def _ideal_dcg(gains: _Gains, k: int | None, n: int) -> np.ndarray:
    """Per query the DCG of its positive grades sorted descending (the top ``k``)."""
    by = np.lexsort((-gains.gain, gains.query))
    query, gain = gains.query[by], gains.gain[by]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if len(query) else np.zeros(0, np.int64)
    rank = np.arange(1, len(query) + 1) - np.repeat(starts, np.diff(np.r_[starts, len(query)]))
    keep = rank <= k if k is not None else np.ones(len(rank), dtype=bool)
    return _sums_in_order(query[keep], gain[keep] / _discount(rank[keep]), n)


def _measure(hits: _Hits, measure: Measure, first: np.ndarray) -> np.ndarray:
    """One measure's value per judged query."""
    kind, k = measure.kind, measure.cutoff
    n_rel = hits.gains.n_rel
    if kind in ("R", "P"):
        count = np.bincount(hits.within(k)[0], minlength=hits.n).astype(np.float64)
        return count / n_rel if kind == "R" else count / k
    found = (first > 0) & ((first <= k) if k is not None else True)
    if kind == "hit":
        return found.astype(np.float64)
    if kind == "RR":
        return np.where(found, 1.0 / np.maximum(first, 1), 0.0)
    if kind == "AP":
        query, rank, _ = hits.within(k)
        starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if len(query) else np.zeros(0, np.int64)
        nth = np.arange(1, len(query) + 1) - np.repeat(starts, np.diff(np.r_[starts, len(query)]))
        return _sums_in_order(query, nth / rank, hits.n) / n_rel
    query, rank, gain = hits.within(k, relevant=False)
    dcg = _sums_in_order(query, gain / _discount(rank), hits.n)
    ideal = _ideal_dcg(hits.gains, k, hits.n)
    return np.divide(dcg, ideal, out=np.zeros(hits.n), where=ideal > 0)


def evaluate_columns(run, qrels: Mapping[str, Mapping[str, int]],
                     measures: Sequence[str | Measure]) -> tuple[list[str], list[str], dict[str, np.ndarray]]:
    """``(judged, excluded, {measure name as given: values})``: the values of each measure for
    the judged queries, in ``judged`` order (see :func:`gabarito.measure.metrics.evaluate`).
    ``run`` is a :class:`ColumnarRun`, a :class:`Run` or any ``{qid: ranking}``."""
    parsed = {name: Measure(name) for name in measures}
    judged, excluded = judged_queries(qrels)
    hits = _Hits(run, qrels, judged)
    first = hits.first_rank()
    return judged, excluded, {name: _measure(hits, m, first) for name, m in parsed.items()}
