"""A run as columns: one row per ``(query, doc, score)``, the form the evaluation core reads.

:class:`ColumnarRun` holds numpy arrays -- the query of each row (an index into ``queries``), the
doc id and the score -- so a run of millions of rows is read, ranked and scored without a dict per
query. :class:`~gabarito.core.runs.Run` stays the type every study, retriever and page uses; the two
convert both ways (:meth:`ColumnarRun.from_run`, :meth:`ColumnarRun.to_run`) and a TREC run file is
read straight into columns (:meth:`ColumnarRun.from_trec`, by :mod:`gabarito.core.trec_columns`);
``Run.from_trec`` returns a :class:`RunView` over them, whose lists are built only when read.

The tie rule is the one of :func:`gabarito.core.runs.by_score`: score descending, ties by doc id
ascending. A ranking given as plain doc ids keeps its order (scored ``-rank``, as
:func:`gabarito.core.runs.ranked` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from gabarito.core.runs import Run
from gabarito.core.trec_columns import read_trec_columns, repeated_line
from gabarito.errors import GabaritoError


def _as_list(entries) -> list:
    return entries if isinstance(entries, list) else list(entries)


def _flatten(lists: Sequence[list]) -> tuple[list, np.ndarray]:
    """Doc ids and scores of rankings laid end to end; a ranking of plain ids is scored
    ``-rank`` (1-based) so the tie rule keeps its order."""
    total = sum(map(len, lists))
    if all(not lst or not isinstance(lst[0], str) for lst in lists):
        flat = list(chain.from_iterable(lists))
        docs = list(map(itemgetter(0), flat))
        scores = np.fromiter(map(itemgetter(1), flat), dtype=np.float64, count=total)
        return docs, scores
    docs, parts = [], []
    for lst in lists:
        if lst and isinstance(lst[0], str):
            docs.extend(lst)
            parts.append(-np.arange(1, len(lst) + 1, dtype=np.float64))
        else:
            docs.extend(map(itemgetter(0), lst))
            parts.append(np.fromiter(map(itemgetter(1), lst), dtype=np.float64, count=len(lst)))
    return docs, (np.concatenate(parts) if parts else np.zeros(0))


@dataclass(frozen=True, eq=False)
class ColumnarRun:
    """``queries[query[i]]`` retrieved ``docs[i]`` with ``score[i]``; rows in any order."""

    queries: np.ndarray          # object array of query ids
    query: np.ndarray            # int64, index into ``queries`` per row
    docs: np.ndarray             # object array of doc ids per row
    score: np.ndarray            # float64 per row
    name: str = field(default="")

    def __len__(self) -> int:
        return len(self.query)

    @cached_property
    def doc_keys(self) -> np.ndarray:
        """:func:`doc_hash` of every row's doc id, computed once: every evaluation of these
        columns reuses it, so only array work is left to them."""
        return doc_hash(self.docs)

    @cached_property
    def all_unique(self) -> bool:
        """True when no doc id appears twice in one query (checked once, for every evaluation)."""
        return not repeated_docs(self.query, self.docs, self.doc_keys).any()

    @classmethod
    def from_run(cls, run: Mapping[str, Iterable], qids: Iterable[str] | None = None, *,
                 name: str | None = None) -> "ColumnarRun":
        """The rows of ``run`` (a :class:`~gabarito.core.runs.Run` or any ``{qid: ranking}``),
        only of ``qids`` when given (absent ones have no rows)."""
        carried = carried_columns(run)
        if carried is not None and qids is None:
            named = getattr(run, "name", "") if name is None else name
            return carried if named == carried.name else replace(carried, name=named)
        wanted = list(run) if qids is None else [q for q in qids if q in run]
        lists = [_as_list(run[q]) for q in wanted]
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        docs, scores = _flatten(lists)
        queries = np.empty(len(wanted), dtype=object)
        queries[:] = wanted
        doc_array = np.empty(len(docs), dtype=object)
        doc_array[:] = docs
        return cls(queries, np.repeat(np.arange(len(wanted), dtype=np.int64), lengths), doc_array,
                   scores, getattr(run, "name", "") if name is None else name)

    def order(self) -> np.ndarray:
        """Row indices grouped by query (in ``queries`` order), each group best first by the tie
        rule (score descending, doc id ascending)."""
        return ranked_order(self.query, self.score, self.docs.__getitem__, any_query_order=False)

    def to_run(self, name: str | None = None):
        """The :class:`~gabarito.core.runs.Run` of these rows (queries in ``queries`` order,
        those without rows left out); a doc id twice in one query is an error naming it."""
        out = Run(name=self.name if name is None else name)
        self.check_unique()
        self._fill(out)
        return out

    def check_unique(self, path: str | Path | None = None) -> None:
        """Raise the one-line error naming the first doc id (in row order) that appears twice in
        one query -- with the file and line when ``path`` is the TREC file these rows were read
        from; nothing when every id is unique per query (:attr:`all_unique`)."""
        if self.all_unique:
            return
        if path is not None:
            lineno, qid, doc = repeated_line(Path(path))
            raise GabaritoError(f"doc id {doc!r} appears twice in one ranking (query {qid!r})", path=path,
                                record=f"line {lineno}")
        i = int(np.flatnonzero(repeated_docs(self.query, self.docs, self.doc_keys))[0])
        raise GabaritoError(f"doc id {self.docs[i]!r} appears twice in one ranking",
                            record=self.queries[self.query[i]])

    def _fill(self, out: dict) -> None:
        """Set each query's ``[(doc, score), ...]`` best first into ``out`` (a dict, by
        ``dict.__setitem__``), queries in ``queries`` order."""
        order = self.order()
        query, score, docs = self.query[order], self.score[order], self.docs[order]
        starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if len(order) else np.zeros(0, dtype=np.int64)
        ends = np.r_[starts[1:], len(order)]
        pairs = list(zip(docs.tolist(), score.tolist()))
        del docs, score
        for q, a, b in zip(query[starts].tolist(), starts.tolist(), ends.tolist()):
            dict.__setitem__(out, self.queries[q], pairs[a:b])

    @classmethod
    def from_trec(cls, path: str | Path, *, name: str = "") -> "ColumnarRun":
        """Read a TREC run file (``qid Q0 doc rank score tag``) into columns
        (:func:`gabarito.core.trec_columns.read_trec_columns`); a malformed line is the same
        one-line error as the line reader's (:func:`gabarito.files.columns`)."""
        path = Path(path)
        columns = read_trec_columns(path)
        if columns is None:
            return cls._from_lines(path, name)
        return cls(*columns, name)

    def as_run(self, path: str | Path | None = None) -> "Run":
        """A :class:`~gabarito.core.runs.Run` of these rows whose lists are built only when it is
        first read (:class:`RunView`); the evaluation reads these columns instead. A doc id twice
        in one query is the error of :meth:`check_unique` (naming ``path``'s line), now."""
        self.check_unique(path)
        return RunView(self)

    @classmethod
    def _from_lines(cls, path: Path, name: str) -> "ColumnarRun":
        from gabarito.files import columns, number

        rankings: dict[str, list] = {}
        for lineno, parts in columns(path, 6, "a TREC run line"):
            rankings.setdefault(parts[0], []).append((parts[2], number(parts[4], float, path, lineno, "score")))
        return cls.from_run(rankings, name=name)


def ranked_order(query: np.ndarray, score: np.ndarray, docs_at, *, any_query_order: bool = True) -> np.ndarray:
    """Row indices grouped by query, each group best first by the tie rule (score descending,
    doc id ascending); ``docs_at(rows)`` gives the doc ids of some rows. Rows that already come
    so (each query's rows together -- in ascending query index unless ``any_query_order`` --
    and in order) are not sorted: only their ties are compared on the ids."""
    n = len(query)
    same = query[1:] == query[:-1]
    starts = np.flatnonzero(np.r_[True, ~same]) if n else np.zeros(0, dtype=np.int64)
    firsts = query[starts]
    in_order = bool(np.all(firsts[1:] > firsts[:-1])) or (any_query_order and len(np.unique(firsts)) == len(starts))
    if in_order and n > 1:
        tie = np.flatnonzero(same & ~(score[:-1] > score[1:]))
        in_order = bool(np.all(score[tie] == score[tie + 1]) and np.all(docs_at(tie) < docs_at(tie + 1)))
    if in_order:
        return np.arange(n)
    text = docs_at(np.arange(n)).astype(str) if n else np.zeros(0, dtype="U1")
    return np.lexsort((text, -score, query))


class RunView(Run):
    """A :class:`~gabarito.core.runs.Run` over a :class:`ColumnarRun`, its lists built on first use.

    It holds its query ids from the start (its length, membership and iteration need no list;
    each id maps to None until built) and no list until something reads one (a query's list,
    values, items, equality, a copy, a pickle, a change): then it becomes a plain ``Run`` -- the
    lists built once, as :meth:`ColumnarRun.to_run` builds them, and its class switched to
    ``Run`` -- and forgets the columns. Until then :func:`carried_columns` gives the columns, so
    an evaluation (:func:`gabarito.measure.metrics.evaluate`) or :meth:`ColumnarRun.from_run`
    reads them directly, with no tuple per row."""

    def __init__(self, columns: ColumnarRun):
        dict.__init__(self)
        present = np.bincount(columns.query, minlength=len(columns.queries)) > 0
        dict.update(self, dict.fromkeys(columns.queries[present].tolist()))
        self.name = columns.name
        self._columns = columns

    def __iter__(self):  # the ids are there; defined here so that dict(view) and {**view} read items
        return dict.__iter__(self)

    def _built(self) -> Run:
        columns = self.__dict__.pop("_columns")
        self.__class__ = Run
        columns._fill(self)
        return self


def _building(name: str):
    def method(self, *args, **kwargs):
        return getattr(self._built(), name)(*args, **kwargs)

    method.__name__ = name
    method.__doc__ = getattr(dict, name).__doc__
    return method


for _name in ("__getitem__", "__reversed__", "__eq__", "__ne__", "__repr__", "__or__", "__ror__", "__ior__",
              "__setitem__", "__delitem__", "__sizeof__", "__reduce__", "__reduce_ex__", "get", "values", "items",
              "pop", "popitem", "setdefault", "update", "clear", "copy"):
    setattr(RunView, _name, _building(_name))


def carried_columns(run) -> ColumnarRun | None:
    """The columns a :class:`RunView` not yet read as a mapping stands for; None for anything else."""
    return run.__dict__.get("_columns") if type(run) is RunView else None


_MIX = np.uint64(0x9E3779B97F4A7C15)


def doc_hash(docs: np.ndarray, query: np.ndarray | None = None) -> np.ndarray:
    """Python's hash of each doc id (an object array), mixed with its query index when given:
    equal inputs give equal keys within a process; whoever relies on a match confirms it on
    the ids themselves."""
    keys = np.fromiter(map(hash, docs.tolist()), dtype=np.int64, count=len(docs)).view(np.uint64)
    return keys if query is None else with_query(keys, query)


def with_query(keys: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Doc keys (``uint64``) mixed with each row's query index, as :func:`doc_hash` mixes them."""
    return keys ^ (query.astype(np.uint64) * _MIX)


def repeated_docs(query: np.ndarray, docs: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
    """A mask of the rows whose doc id already appears in the same query (rows in any order;
    ``keys``: the docs' :func:`doc_hash` when known)."""
    keys = doc_hash(docs, query) if keys is None else with_query(keys, query)
    return repeated_keys(keys, query, docs.__getitem__)


def repeated_keys(keys: np.ndarray, query: np.ndarray, docs_at) -> np.ndarray:
    """A mask of the rows whose doc id already appears in the same query, from each row's key
    (:func:`doc_hash` mixed with its query): only rows sharing a key are compared on their ids
    (``docs_at(rows)``); with no shared key (one plain sort tells) none is."""
    mask = np.zeros(len(query), dtype=bool)
    ordered = np.sort(keys)
    if not np.any(ordered[1:] == ordered[:-1]):
        return mask
    del ordered
    by_key = np.argsort(keys, kind="stable")
    same = np.flatnonzero(keys[by_key][1:] == keys[by_key][:-1])
    rows = np.unique(np.r_[by_key[same], by_key[same + 1]])
    seen: set = set()
    for row, q, doc in zip(rows.tolist(), query[rows].tolist(), docs_at(rows).tolist()):
        mask[row] = (q, doc) in seen
        seen.add((q, doc))
    return mask
    rows = np.unique(np.r_[by_key[same], by_key[same + 1]])
    seen: set = set()
    for row, q, doc in zip(rows.tolist(), query[rows].tolist(), docs[rows].tolist()):
        mask[row] = (q, doc) in seen
        seen.add((q, doc))
    return mask
