"""The two data types every study, the CLI and the pages share: :class:`Run` and :class:`Qrels`.

* A :class:`Run` maps each query id to its ranked list of ``(doc_id, score)`` pairs, best first.
  The order is fixed once, when the run is built: score descending, ties broken by doc id
  ascending (trec_eval breaks ties by doc id descending; see :mod:`gabarito.measure.metrics`).
  A doc id appears at most once per query.
* :class:`Qrels` maps each query id to ``{doc_id: grade}`` with integer grades; a grade >= 1 is
  relevant, 0 judged not relevant. Several relevant documents and graded judgments are allowed.

Both are plain ``dict`` subclasses, so JSON round trips and ``dict`` code keep working; the
constructors normalise and validate their input.

An id written to a TREC file (query, document, run tag) never holds a blank or a control or
invisible format character (:func:`id_flaw`): the columns are separated by blanks, so such an id
would shift them or start a new line. The writers refuse it in one line; the loaders of
:mod:`gabarito.inputs` refuse it earlier, naming the input file and the record.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.files import columns, number
from gabarito.hashing import atomic_write_text

Pair = tuple[str, float]


def id_flaw(text: str) -> str | None:
    """What makes ``text`` unusable as an id of a TREC line -- a blank of any kind (``str.split``
    separates columns on each), a control character (C0, DEL, C1) or an invisible format character
    (category Cf: zero-width spaces, direction marks, BOM) -- named as ``"a space (U+0020)"``, ``"a
    line feed (U+000A)"``...; None when ``text`` is usable."""
    if text.isprintable() and " " not in text:  # the C-speed answer for nearly every id
        return None
    for ch in text:
        if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf"):
            name = {" ": "space", "\t": "tab", "\n": "line feed", "\r": "carriage return"}.get(ch)
            return f"a {name or unicodedata.name(ch, 'control character').lower()} (U+{ord(ch):04X})"
    return None


def check_trec_ids(ids: Iterable[str], what: str, *, path: object = None, record: object = None) -> None:
    """Refuse, in one line, the first of ``ids`` that a TREC line cannot carry (:func:`id_flaw`)."""
    for one in ids:
        flaw = id_flaw(one)
        if flaw is not None:
            raise GabaritoError(f"{what} {one!r} holds {flaw}: an id in a TREC file cannot hold blanks or "
                                f"control characters", path=path, record=record)


def by_score(pairs: Iterable[Pair]) -> list[Pair]:
    """``(doc_id, score)`` pairs best first: score descending, ties by doc id ascending -- the
    one tie rule of every ranking in gabarito (engines, fusion, runs, measures)."""
    return sorted(pairs, key=lambda p: (-p[1], p[0]))


def trec_run_lines(rankings: Mapping[str, Sequence[Pair]], tag: str, *, path: object = None) -> list[str]:
    """TREC run lines ``qid Q0 doc rank score tag`` of lists already ranked (ranks from 1); an id or
    tag a line cannot carry is refused (:func:`check_trec_ids`, ``path`` names the file)."""
    check_trec_ids([tag], "run tag", path=path)
    check_trec_ids(rankings, "query id", path=path)
    for qid, pairs in rankings.items():
        check_trec_ids({doc for doc, _ in pairs}, "document id", path=path, record=f"query {qid}")
    return [f"{qid} Q0 {doc} {rank} {score:.6f} {tag}"
            for qid, pairs in rankings.items() for rank, (doc, score) in enumerate(pairs, start=1)]


def ranked(entries: Iterable[Pair] | Iterable[str], *, where: object = None) -> list[Pair]:
    """``(doc_id, score)`` pairs sorted by (-score, doc id); plain ids keep their order
    (scored ``-rank``). A duplicate doc id is an error."""
    items = list(entries)
    if items and isinstance(items[0], str):
        pairs = [(doc, float(-i)) for i, doc in enumerate(items, start=1)]
    else:
        pairs = by_score((str(d), float(s)) for d, s in items)
    seen: set[str] = set()
    for doc, _ in pairs:
        if doc in seen:
            raise GabaritoError(f"doc id {doc!r} appears twice in one ranking", record=where)
        seen.add(doc)
    return pairs


class Run(dict):
    """``{query id: [(doc id, score), ...]}``, each list best first (ties by doc id)."""

    def __init__(self, rankings: Mapping[str, Iterable[Pair] | Iterable[str]] | None = None, *,
                 name: str = ""):
        super().__init__()
        self.name = name
        for qid, entries in (rankings or {}).items():
            self[str(qid)] = ranked(entries, where=qid)

    def ids(self, qid: str) -> list[str]:
        """The doc ids of one query, best first (empty when the query is absent)."""
        return [doc for doc, _ in self.get(qid, [])]

    def cut(self, depth: int) -> "Run":
        """The same run with every list truncated to ``depth``."""
        if depth < 1:
            raise GabaritoError(f"depth must be at least 1, not {depth}")
        out = Run(name=self.name)
        for qid, pairs in self.items():
            dict.__setitem__(out, qid, list(pairs[:depth]))
        return out

    def to_trec(self, tag: str, *, path: object = None) -> str:
        """TREC run lines ``qid Q0 doc rank score tag``, queries in run order, ranks 1-based."""
        lines = trec_run_lines(self, tag, path=path)
        return "\n".join(lines) + ("\n" if lines else "")

    def write_trec(self, path: str | Path, tag: str) -> Path:
        return atomic_write_text(path, self.to_trec(tag, path=path))

    @classmethod
    def from_trec(cls, path: str | Path, *, name: str = "") -> "Run":
        """Read a TREC run file (six columns) through its columns
        (:meth:`gabarito.core.columnar.ColumnarRun.from_trec`, no dict per line); a malformed
        line or a doc id twice in one query is a one-line error. A ``Run`` is returned as a view
        over the columns (:class:`gabarito.core.columnar.RunView`): its lists are built when it
        is first read as a mapping, and an evaluation reads the columns instead."""
        from gabarito.core.columnar import ColumnarRun

        columns = ColumnarRun.from_trec(path, name=name)
        columns.check_unique(path)
        return columns.as_run() if cls is Run else cls(columns.to_run(), name=name)


class Qrels(dict):
    """``{query id: {doc id: grade}}``; grades are integers, >= 1 relevant."""

    def __init__(self, judgments: Mapping[str, Mapping[str, int]] | None = None):
        super().__init__()
        for qid, grades in (judgments or {}).items():
            row = {}
            for doc, grade in grades.items():
                if isinstance(grade, bool) or not isinstance(grade, int):
                    raise GabaritoError(f"grade of {doc!r} must be an integer, not {grade!r}", record=qid)
                row[str(doc)] = grade
            self[str(qid)] = row

    @classmethod
    def single(cls, answers: Mapping[str, str]) -> "Qrels":
        """One relevant document (grade 1) per query: ``{qid: doc_id}``."""
        return cls({qid: {doc: 1} for qid, doc in answers.items()})

    @classmethod
    def from_lists(cls, relevant: Mapping[str, Sequence[str]]) -> "Qrels":
        """Binary qrels from ``{qid: [relevant doc ids]}`` (an empty list: nothing relevant)."""
        return cls({qid: {doc: 1 for doc in docs} for qid, docs in relevant.items()})

    def relevant(self, qid: str, min_grade: int = 1) -> set[str]:
        return {doc for doc, grade in self.get(qid, {}).items() if grade >= min_grade}

    def judged(self, min_grade: int = 1) -> list[str]:
        """Sorted ids of the queries with at least one document of grade >= ``min_grade``."""
        return sorted(q for q in self if self.relevant(q, min_grade))

    def at_least(self, min_grade: int) -> "Qrels":
        """Binary qrels keeping the documents of grade >= ``min_grade`` as grade 1."""
        return Qrels({q: {d: 1 for d, g in row.items() if g >= min_grade} for q, row in self.items()})

    def to_trec(self, *, path: object = None) -> str:
        """Qrels lines ``qid 0 doc grade``; an id a line cannot carry is refused (:func:`check_trec_ids`)."""
        check_trec_ids(self, "query id", path=path)
        for qid, row in self.items():
            check_trec_ids(row, "document id", path=path, record=f"query {qid}")
        lines = [f"{qid} 0 {doc} {grade}" for qid, row in self.items() for doc, grade in row.items()]
        return "\n".join(lines) + ("\n" if lines else "")

    def write_trec(self, path: str | Path) -> Path:
        return atomic_write_text(path, self.to_trec(path=path))

    @classmethod
    def from_trec(cls, path: str | Path) -> "Qrels":
        """Read ``qid iteration doc grade`` lines; a malformed line is a one-line error."""
        judgments: dict[str, dict[str, int]] = {}
        for lineno, parts in columns(path, 4, "a qrels line"):
            judgments.setdefault(parts[0], {})[parts[2]] = number(parts[3], int, path, lineno, "grade")
        return cls(judgments)
