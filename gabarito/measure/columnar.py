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
from itertools import chain
from operator import itemgetter
from typing import Mapping, Sequence

import numpy as np

from gabarito.core.columnar import (ColumnarRun, carried_columns, doc_hash, ranked_order, repeated_keys,
                                    with_query)
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
                    query.append(j), docs.append(doc), gains.append(grade)
                    self.n_rel[j] += grade >= 1
        self.query = np.asarray(query, dtype=np.int64)
        self.docs = np.empty(len(docs), dtype=object)
        self.docs[:] = docs
        self.gain = np.asarray(gains, dtype=np.float64)


class _Rows:
    """The rows of the judged queries: ``query`` (judged index), ``score``, ``key`` (the doc id's
    hash mixed with the query), and ``docs(rows)``, the ids of some rows, read only where a
    tie, a match or a repeat needs them; ``unique``: the ids are known unique per query (a
    :class:`Run` checks that when built)."""

    def __init__(self, query, score, key, docs, unique: bool):
        self.query, self.score, self.key, self.docs, self.unique = query, score, key, docs, unique


def _pairs(entries) -> list:
    """A ranking as ``(doc, score)`` pairs: plain ids keep their order (scored ``-rank``)."""
    items = entries if isinstance(entries, list) else list(entries)
    if items and isinstance(items[0], str):
        return [(doc, -float(rank)) for rank, doc in enumerate(items, start=1)]
    return items


def _rows(run, judged: Sequence[str]) -> _Rows:
    """The rows of ``run`` (a :class:`ColumnarRun` or any ``{qid: ranking}``) of the judged
    queries. From a mapping, one pass over each kind of object: the doc ids are only hashed."""
    positions = {q: j for j, q in enumerate(judged)}
    carried = carried_columns(run)
    run = run if carried is None else carried
    if isinstance(run, ColumnarRun):
        to_judged = np.array([positions.get(q, -1) for q in run.queries], dtype=np.int64)
        query = to_judged[run.query] if len(run) else np.zeros(0, dtype=np.int64)
        keep = query >= 0
        if keep.all():  # every query judged: no copy of the rows
            return _Rows(query, run.score, with_query(run.doc_keys, query), run.docs.__getitem__, run.all_unique)
        docs = run.docs[keep]
        return _Rows(query[keep], run.score[keep], with_query(run.doc_keys[keep], query[keep]), docs.__getitem__,
                     run.all_unique)
    present = [q for q in judged if q in run]
    lists = [_pairs(run[q]) for q in present]
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    query = np.repeat(np.array([positions[q] for q in present], dtype=np.int64), lengths)
    flat = list(chain.from_iterable(lists))
    score = np.fromiter(map(itemgetter(1), flat), dtype=np.float64, count=len(flat))
    keys = np.fromiter(map(hash, map(itemgetter(0), flat)), dtype=np.int64, count=len(flat)).view(np.uint64)

    def docs(rows: np.ndarray) -> np.ndarray:
        out = np.empty(len(rows), dtype=object)
        out[:] = [flat[i][0] for i in rows.tolist()]
        return out

    return _Rows(query, score, with_query(keys, query), docs, isinstance(run, Run))


def _repeated(rows: _Rows) -> int | None:
    """The first row whose doc id already appeared in its query (None: no repeat)."""
    repeated = np.flatnonzero(repeated_keys(rows.key, rows.query, rows.docs))
    return int(repeated[0]) if len(repeated) else None


def _ranked(rows: _Rows) -> tuple[np.ndarray, np.ndarray]:
    """``(order, rank)``: rows grouped by query and best first by the tie rule
    (:func:`~gabarito.core.columnar.ranked_order`: rows already so are not sorted again), and
    each ordered row's 1-based rank."""
    n = len(rows.query)
    order = ranked_order(rows.query, rows.score, rows.docs)
    query = rows.query[order]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if n else np.zeros(0, dtype=np.int64)
    rank = np.arange(1, n + 1) - np.repeat(starts, np.diff(np.r_[starts, n]))
    return order, rank


def _grades(rows: _Rows, order: np.ndarray, gains: _Gains) -> np.ndarray:
    """The gain of each ordered row (0 when the doc is not a positive grade of its query): a
    join on the rows' keys, every match confirmed on the ids."""
    out = np.zeros(len(order), dtype=np.float64)
    if not len(gains.query) or not len(order):
        return out
    keys, qkeys = rows.key[order], doc_hash(gains.docs, gains.query)
    by_key = np.argsort(qkeys, kind="stable")
    sorted_keys = qkeys[by_key]
    if np.any(sorted_keys[1:] == sorted_keys[:-1]):
        return _grades_by_dict(rows, order, gains)
    seen = np.zeros(_FILTER_SIZE, dtype=bool)  # a one-hash Bloom filter: most rows stop here
    seen[qkeys & _FILTER_MASK] = True
    maybe = np.flatnonzero(seen[keys & _FILTER_MASK])
    at = np.minimum(np.searchsorted(sorted_keys, keys[maybe]), len(sorted_keys) - 1)
    found = sorted_keys[at] == keys[maybe]
    hit, match = maybe[found], by_key[at[found]]
    if not (np.all(gains.query[match] == rows.query[order[hit]])
            and np.all(gains.docs[match] == rows.docs(order[hit]))):
        return _grades_by_dict(rows, order, gains)
    out[hit] = gains.gain[match]
    return out


def _grades_by_dict(rows: _Rows, order: np.ndarray, gains: _Gains) -> np.ndarray:
    """:func:`_grades` by a dict lookup per row (taken only when two keys collide)."""
    table = {(q, d): g for q, d, g in zip(gains.query.tolist(), gains.docs.tolist(), gains.gain.tolist())}
    pairs = zip(rows.query[order].tolist(), rows.docs(order).tolist())
    return np.array([table.get(pair, 0.0) for pair in pairs], dtype=np.float64)


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
        rows = _rows(run, judged)
        self.n = len(judged)
        self.gains = _Gains(qrels, judged)
        twice = None if rows.unique else _repeated(rows)
        if twice is not None:
            raise GabaritoError(f"doc id {rows.docs(np.array([twice]))[0]!r} appears twice in one ranking",
                                record=judged[rows.query[twice]])
        order, rank = _ranked(rows)
        query = rows.query[order]
        gain = _grades(rows, order, self.gains)
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
