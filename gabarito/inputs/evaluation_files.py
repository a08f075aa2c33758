"""Loading evaluations: questions with the ids of the documents that answer them.

Evaluations (:func:`load_evaluation`) come from:

* a JSON file holding a list ``[{"query", "relevantIds": [...], "id"?, "type"?,
  "severity"?, "answer"?, ...}]``. A missing id becomes ``q001``, ``q002``, ...
  (from the 1-based position); keys not named here are kept in
  :attr:`EvalQuery.extra`. ``relevantIds`` must be present; ``[]`` marks a
  question the documents cannot answer. The same question text twice (blanks
  and case aside) is refused, naming both records; an id may be a string or a
  whole number, a number with a decimal point is refused by name;
* a BEIR-style folder: ``queries.jsonl`` (``{"_id", "text"}`` per line) and
  ``qrels/test.tsv`` (``query-id corpus-id score``, tab-separated, header
  optional; a score above 0 is relevant). Without ``qrels/test.tsv`` the only
  ``qrels/*.tsv`` is used. The graded scores are kept in
  ``extra["relevance"]``. BEIR queries with no relevant document in the qrels
  are **skipped**: they are left out of the returned list and their ids are in
  its :attr:`Evaluation.skipped` attribute.

Bad input raises a one-line :class:`GabaritoError` naming the file and the
record (its 1-based position, or line number in ``.jsonl``/``.tsv`` files, and
its id), and nothing is returned. The public import path is
:mod:`gabarito.inputs.documents`, which re-exports :func:`load_evaluation`.
"""

from __future__ import annotations

import math
import unicodedata
from pathlib import Path
from typing import Iterable, Sequence

from gabarito.errors import GabaritoError
from gabarito.inputs.items import Document, EvalQuery, Evaluation
from gabarito.inputs.relevance import read_relevance, whole_grade
from gabarito.inputs.textfiles import (Ids, Warn, _json_kind, _label, _read_json_list, _read_jsonl, _read_text,
                                       blanks_made_underscores, record_id, warn_stderr)

__all__ = ["load_evaluation"]


def load_evaluation(path: str | Path, documents: Iterable[Document | str] | None = None,
                    *, split: str = "test", warn: Warn = warn_stderr) -> Evaluation:
    """Load and check evaluation queries from a JSON list file or a BEIR folder.

    With ``documents`` (the corpus, or its ids) every relevant id must name one
    of them and no query may list more relevant ids than there are documents.
    ``split`` picks ``qrels/<split>.tsv`` in a BEIR folder. ``warn`` receives the
    one-line warning of ids read in another Unicode form (NFC).
    """
    path = Path(path)
    doc_ids: set[str] | None = None
    n_docs = 0
    if documents is not None:
        ids = [unicodedata.normalize("NFC", d.id if isinstance(d, Document) else str(d)) for d in documents]
        doc_ids, n_docs = set(ids), len(ids)
    if path.is_dir():
        return _load_beir_evaluation(path, doc_ids, n_docs, split, warn)
    if not path.exists():
        raise GabaritoError("evaluation file not found", path=path)
    return _load_json_evaluation(path, doc_ids, n_docs, warn)


class Unknown:
    """The ids an evaluation names that are not among the documents: each one is collected, and
    :meth:`refuse` reports them in one line (how many, the first few) at the first one's record."""

    SHOWN = 5

    def __init__(self, doc_ids: set[str] | None):
        self.doc_ids = doc_ids
        self.found: list[tuple[Path, str, str, str]] = []

    def check(self, did: str, path: Path, label: str, what: str = "relevant id") -> bool:
        """Whether ``did`` is a document (or no documents were given); when not, it is kept."""
        if self.doc_ids is not None and did not in self.doc_ids:
            self.found.append((path, label, what, did))
            return False
        return True

    def refuse(self) -> None:
        if not self.found:
            return
        path, label, what, did = self.found[0]
        more = ""
        if len(self.found) > 1:
            first: dict[str, str] = {}
            for _, where, _, d in self.found:
                first.setdefault(d, where)
            named = ", ".join(f"{d!r} (record {where})" for d, where in list(first.items())[:self.SHOWN])
            rest = f" and {len(first) - self.SHOWN} more" if len(first) > self.SHOWN else ""
            more = f"; {len(self.found)} references to {len(first)} unknown id(s) in all: {named}{rest}"
        raise GabaritoError(f"{what} {did!r} is not in the documents{more}", path=path, record=label)


def _relevant_id(ids: Ids, value: str, label: str, doc_ids: set[str] | None) -> str:
    """A relevant id through ``ids``; one holding blanks that the documents hold with ``_`` instead
    (a Markdown file name with blanks) is refused with the id to write."""
    nfc = unicodedata.normalize("NFC", value)
    mapped = blanks_made_underscores(nfc)
    if doc_ids is not None and mapped != nfc and mapped in doc_ids:
        raise GabaritoError(f"relevant id {value!r} holds blanks; the documents name it {mapped!r} (each blank "
                            f"of a Markdown file name is made _ in its id)", path=ids.path, record=label)
    return ids(value, label, "relevant id")


def _check_count(path: Path, label: str, relevant: Sequence[str], doc_ids: set[str] | None, n_docs: int) -> None:
    if doc_ids is not None and len(relevant) > n_docs:
        raise GabaritoError(
            f"{len(relevant)} relevant ids is larger than the corpus can answer ({n_docs} documents)",
            path=path, record=label)


def _finish(path: Path, queries: list[EvalQuery], skipped: Sequence[str] = ()) -> Evaluation:
    if not any(q.relevant_ids for q in queries):
        extra = f" ({len(skipped)} queries without qrels were skipped)" if skipped else ""
        raise GabaritoError(f"no query has a relevant id, so nothing can be measured{extra}", path=path)
    return Evaluation(queries, path=path, skipped=skipped)


_KNOWN_KEYS = ("id", "query", "relevantIds", "type", "severity", "answer")


def _question_key(text: str) -> str:
    return " ".join(text.split()).casefold()


def _check_repeated(path: Path, label: str, query: str, relevant: Sequence[str],
                    texts: dict[str, tuple[str, tuple[str, ...]]]) -> None:
    """The same question (blanks and case aside) twice is refused: with other relevantIds it
    contradicts itself, with the same ones it would count twice."""
    key = _question_key(query)
    if key not in texts:
        texts[key] = (label, tuple(sorted(relevant)))
        return
    first, first_relevant = texts[key]
    if first_relevant != tuple(sorted(relevant)):
        raise GabaritoError(f"the same question as record {first} with other relevantIds "
                            f"({list(first_relevant)} there, {sorted(relevant)} here)", path=path, record=label)
    raise GabaritoError(f"the same question as record {first} (it would be counted twice)", path=path, record=label)


def question_text(value: object, key: str, path: Path, label: str) -> str:
    """The question under ``key``: non-blank text; a number or another JSON value is named."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    if value is None or isinstance(value, str):
        raise GabaritoError(f"empty query (no text under {key!r})", path=path, record=label)
    kind = f"the number {value!r}" if _json_kind(value) == "number" else f"a JSON {_json_kind(value)}"
    raise GabaritoError(f"{key!r} must be the question's text (a JSON string), not {kind}; write it in quotes "
                        f"to search for it", path=path, record=label)


def _relevant_ids(rec: dict, ids: Ids, label: str, doc_ids: set[str] | None) -> tuple[str, ...]:
    if "relevantIds" not in rec:
        raise GabaritoError("missing 'relevantIds' (use [] for a query the documents cannot answer)",
                            path=ids.path, record=label)
    relevant = rec["relevantIds"]
    if not isinstance(relevant, list) or not all(isinstance(r, str) and r for r in relevant):
        raise GabaritoError("'relevantIds' must be a list of non-empty strings", path=ids.path, record=label)
    relevant = [_relevant_id(ids, r, label, doc_ids) for r in relevant]
    dupes = sorted({r for r in relevant if relevant.count(r) > 1})
    if dupes:
        raise GabaritoError(f"'relevantIds' repeats {', '.join(map(repr, dupes))}", path=ids.path, record=label)
    return tuple(relevant)


def _load_json_evaluation(path: Path, doc_ids: set[str] | None, n_docs: int, warn: Warn) -> Evaluation:
    data = _read_json_list(path, "evaluation file", keys=True)
    queries: list[EvalQuery] = []
    seen: dict[str, int] = {}
    texts: dict[str, tuple[str, tuple[str, ...]]] = {}
    ids, unknown = Ids(path), Unknown(doc_ids)
    for i, rec in enumerate(data, start=1):
        if not isinstance(rec, dict):
            raise GabaritoError(f"expected an object, got a JSON {_json_kind(rec)}", path=path, record=i)
        qid = record_id(rec, "id", path, i, ids) if rec.get("id") is not None else f"q{i:03d}"
        label = _label(i, qid)
        if getattr(rec, "repeated", ()):
            raise GabaritoError(f"the record gives the key {rec.repeated[0]!r} twice", path=path, record=label)
        if qid in seen:
            raise GabaritoError(f"duplicate query id {qid!r} (first at record {seen[qid]})",
                                path=path, record=label)
        query = question_text(rec.get("query"), "query", path, label)
        relevant = _relevant_ids(rec, ids, label, doc_ids)
        _check_count(path, label, relevant, doc_ids, n_docs)
        known = [rid for rid in relevant if unknown.check(rid, path, label)]  # the others refused at the end
        _check_repeated(path, label, query, relevant, texts)
        strings = {}
        for key in ("type", "severity", "answer"):
            value = rec.get(key, "")
            if value is None:
                value = ""
            if not isinstance(value, str):
                raise GabaritoError(f"{key!r} must be a string", path=path, record=label)
            strings[key] = value
        extra = {k: v for k, v in rec.items() if k not in _KNOWN_KEYS}
        if "relevance" in extra:
            extra["relevance"] = read_relevance(extra["relevance"], known, ids,
                                                lambda did, what: unknown.check(did, path, label, what),
                                                path, label)
        seen[qid] = i
        queries.append(EvalQuery(qid, query, relevant, extra=extra, **strings))
    unknown.refuse()
    ids.notice(warn)
    return _finish(path, queries)


def _qrels_file(folder: Path, split: str) -> Path:
    qdir = folder / "qrels"
    wanted = qdir / f"{split}.tsv"
    if wanted.is_file():
        return wanted
    found = sorted(qdir.glob("*.tsv")) if qdir.is_dir() else []
    if len(found) == 1:
        return found[0]
    if not found:
        raise GabaritoError(f"no qrels: expected qrels/{split}.tsv", path=folder)
    names = ", ".join(p.name for p in found)
    raise GabaritoError(f"no qrels/{split}.tsv and several other qrels files ({names}); pick a split",
                        path=folder)


def _score(text: str, path: Path, label: str) -> int:
    """A qrels score: a whole number (``2`` or ``2.0``); a fraction, NaN or infinity is refused."""
    try:
        value: float = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise GabaritoError(f"score {text!r} is not a number", path=path, record=label) from None
    if not math.isfinite(value):
        raise GabaritoError(f"score {text!r} is not a finite number", path=path, record=label)
    whole = whole_grade(value)
    if whole is None:
        raise GabaritoError(f"score {text!r} is not a whole number (a relevance grade is an integer)",
                            path=path, record=label)
    return whole


def _read_qrels(path: Path, ids: Ids) -> tuple[dict[str, dict[str, int]], dict[tuple[str, str], int]]:
    """``{query id: {document id: score}}`` for the rows with a score above 0, in file order,
    and the line number of each ``(query id, document id)`` row."""
    out: dict[str, dict[str, int]] = {}
    lines: dict[tuple[str, str], int] = {}
    scores: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(_read_text(path, "qrels file").split("\n"), start=1):
        if not line.strip():
            continue
        cols = line.rstrip("\r").split("\t")
        if len(cols) != 3:
            cols = line.split()
        if lineno == 1 and cols and cols[0].strip().lower() in ("query-id", "query_id", "qid"):
            continue
        if len(cols) != 3:
            raise GabaritoError(f"expected 3 columns (query-id, corpus-id, score), found {len(cols)}",
                                path=path, record=f"line {lineno}")
        qid, did, score_text = (c.strip() for c in cols)
        label = f"line {lineno} ({qid} {did})"
        if not qid or not did:
            raise GabaritoError("empty query-id or corpus-id", path=path, record=label)
        qid, did = ids(qid, label, "query-id"), ids(did, label, "corpus-id")
        score = _score(score_text, path, label)
        if (qid, did) in lines and scores[(qid, did)] != score:
            raise GabaritoError(f"judged twice with different scores ({scores[(qid, did)]} at line "
                                f"{lines[(qid, did)]}, {score} here)", path=path, record=label)
        lines.setdefault((qid, did), lineno)
        scores[(qid, did)] = score
        if score > 0:
            out.setdefault(qid, {})[did] = score
    return out, lines


def _load_beir_evaluation(folder: Path, doc_ids: set[str] | None, n_docs: int, split: str,
                          warn: Warn) -> Evaluation:
    qpath = folder / "queries.jsonl"
    if not qpath.is_file():
        raise GabaritoError("folder holds no queries.jsonl (expected a BEIR folder)", path=folder)
    qrels_path = _qrels_file(folder, split)
    qrel_ids, ids, unknown = Ids(qrels_path), Ids(qpath), Unknown(doc_ids)
    qrels, qrel_lines = _read_qrels(qrels_path, qrel_ids)
    queries: list[EvalQuery] = []
    skipped: list[str] = []
    seen: dict[str, int] = {}
    for lineno, rec in _read_jsonl(qpath, "queries file"):
        qid = record_id(rec, "_id", qpath, lineno, ids)
        label = _label(lineno, qid)
        if qid in seen:
            raise GabaritoError(f"duplicate query id {qid!r} (first at line {seen[qid]})",
                                path=qpath, record=label)
        seen[qid] = lineno
        text = question_text(rec.get("text"), "text", qpath, label)
        rel = qrels.get(qid)
        if not rel:
            skipped.append(qid)
            continue
        relevant = tuple(rel)
        _check_count(qpath, label, relevant, doc_ids, n_docs)
        for did in relevant:
            unknown.check(did, qrels_path, f"line {qrel_lines[(qid, did)]} ({qid} {did})")
        extra = {k: v for k, v in rec.items() if k not in ("_id", "text")}
        extra["relevance"] = dict(rel)
        queries.append(EvalQuery(qid, text, relevant, extra=extra))
    unknown.refuse()
    strays = [key for key in qrel_lines if key[0] not in seen]
    if strays:
        qid, did = strays[0]
        raise GabaritoError(f"query id {qid!r} is not in queries.jsonl", path=qrels_path,
                            record=f"line {qrel_lines[strays[0]]} ({qid} {did})")
    ids.notice(warn)
    qrel_ids.notice(warn)
    return _finish(qpath, queries, skipped)
