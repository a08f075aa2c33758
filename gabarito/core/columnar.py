"""A run as columns: one row per ``(query, doc, score)``, the form the evaluation core reads.

:class:`ColumnarRun` holds numpy arrays -- the query of each row (an index into ``queries``), the
doc id and the score -- so a run of millions of rows is read, ranked and scored without a dict per
query. :class:`~gabarito.core.runs.Run` stays the type every study, retriever and page uses; the two
convert both ways (:meth:`ColumnarRun.from_run`, :meth:`ColumnarRun.to_run`) and a TREC run file is
read straight into columns (:meth:`ColumnarRun.from_trec`, which ``Run.from_trec`` goes through).

The tie rule is the one of :func:`gabarito.core.runs.by_score`: score descending, ties by doc id
ascending. A ranking given as plain doc ids keeps its order (scored ``-rank``, as
:func:`gabarito.core.runs.ranked` does).
"""

from __future__ import annotations

import csv
import re
from io import StringIO
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from gabarito.errors import GabaritoError

#: Characters that Python's ``str.split``/``splitlines`` treat as separators and the pandas
#: whitespace reader does not: a file holding one is read line by line instead.
_EXOTIC_SPACE = re.compile("[\v\f\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]|\r(?!\n)")


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

    def doc_text(self) -> np.ndarray:
        """The doc ids as a fixed-width unicode array (compared and sorted in C, by code point
        as Python compares ``str``)."""
        return self.docs.astype(str) if len(self.docs) else np.zeros(0, dtype="U1")

    def order(self) -> np.ndarray:
        """Row indices grouped by query (in ``queries`` order), each group best first by the tie
        rule (score descending, doc id ascending)."""
        return np.lexsort((self.doc_text(), -self.score, self.query))

    def to_run(self, name: str | None = None):
        """The :class:`~gabarito.core.runs.Run` of these rows (queries in ``queries`` order,
        those without rows left out); a doc id twice in one query is an error naming it."""
        from gabarito.core.runs import Run

        order = self.order()
        query, score = self.query[order], self.score[order]
        repeated = np.flatnonzero(repeated_docs(query, self.docs[order]))
        if len(repeated):
            i = order[repeated[0]]
            raise GabaritoError(f"doc id {self.docs[i]!r} appears twice in one ranking",
                                record=self.queries[self.query[i]])
        docs = self.docs[order]
        same = query[1:] == query[:-1]
        out = Run(name=self.name if name is None else name)
        starts = np.flatnonzero(np.r_[True, ~same]) if len(order) else np.zeros(0, dtype=np.int64)
        ends = np.r_[starts[1:], len(order)]
        pairs = list(zip(docs.tolist(), score.tolist()))
        for q, a, b in zip(query[starts].tolist(), starts.tolist(), ends.tolist()):
            dict.__setitem__(out, self.queries[q], pairs[a:b])
        return out

    @classmethod
    def from_trec(cls, path: str | Path, *, name: str = "") -> "ColumnarRun":
        """Read a TREC run file (``qid Q0 doc rank score tag``) into columns; a malformed line
        is the same one-line error as the line reader's (:func:`gabarito.files.columns`)."""
        path = Path(path)
        frame = _read_trec_frame(path)
        if frame is None:
            return cls._from_lines(path, name)
        codes, queries = pd.factorize(frame[0], sort=False)
        return cls(np.asarray(queries, dtype=object), codes.astype(np.int64),
                   frame[2].to_numpy(dtype=object), frame[4].to_numpy(dtype=np.float64), name)

    @classmethod
    def _from_lines(cls, path: Path, name: str) -> "ColumnarRun":
        from gabarito.files import columns, number

        rankings: dict[str, list] = {}
        for lineno, parts in columns(path, 6, "a TREC run line"):
            rankings.setdefault(parts[0], []).append((parts[2], number(parts[4], float, path, lineno, "score")))
        return cls.from_run(rankings, name=name)


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
    """A mask of the rows whose doc id already appears in the same query (rows in any order):
    rows sharing a key of :func:`doc_hash` (``keys``: the docs' hashes when known) are compared
    on the ids."""
    mask = np.zeros(len(query), dtype=bool)
    keys = doc_hash(docs, query) if keys is None else with_query(keys, query)
    by_key = np.argsort(keys, kind="stable")
    same = np.flatnonzero(keys[by_key][1:] == keys[by_key][:-1])
    if not len(same):
        return mask
    rows = np.unique(np.r_[by_key[same], by_key[same + 1]])
    seen: set = set()
    for row, q, doc in zip(rows.tolist(), query[rows].tolist(), docs[rows].tolist()):
        mask[row] = (q, doc) in seen
        seen.add((q, doc))
    return mask


def _read_trec_frame(path: Path) -> pd.DataFrame | None:
    """The six whitespace-separated columns of a TREC run file (ids as text, score as a float
    parsed like Python's ``float``), or None when the file needs the line reader: an odd
    separator, a missing or extra column, a score that is not a number."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GabaritoError("file not found", path=path) from None
    if _EXOTIC_SPACE.search(text):
        return None
    if not text.strip():
        return pd.DataFrame({i: pd.Series([], dtype=object) for i in range(6)}).astype({4: np.float64})
    try:
        frame = pd.read_csv(StringIO(text), sep=r"\s+", header=None, quoting=csv.QUOTE_NONE, dtype=str,
                            keep_default_na=False, na_filter=False)
    except (pd.errors.ParserError, ValueError):
        return None
    if frame.shape[1] != 6 or (frame[5] == "").any():
        return None
    try:  # numpy's text-to-float cast rounds correctly, as Python's float does
        frame[4] = frame[4].to_numpy(dtype=str).astype(np.float64)
    except ValueError:
        return None
    return frame
