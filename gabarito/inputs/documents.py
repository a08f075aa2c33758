"""Loading what a user evaluates: their documents and their questions with known answers.

Documents (:func:`load_documents`) come from one of three layouts:

* a JSON file holding a list ``[{"id", "text", "title"?}, ...]``;
* a folder of Markdown files: every ``*.md`` below it (recursively, in sorted
  order; files and folders whose name starts with ``.`` are skipped). The id is
  the path relative to the folder without ``.md``, with ``/`` between parts
  (``guides/install``); the title is the first ``# `` heading outside code
  fences (``""`` when there is none); the text is the whole file, with a
  leading byte-order mark removed and line endings turned into ``\\n``;
* a BEIR-style folder holding ``corpus.jsonl`` (one ``{"_id", "title", "text"}``
  per line), or the path of such a ``.jsonl`` file itself.

Evaluations (:func:`load_evaluation`) come from:

* a JSON file holding a list ``[{"query", "relevantIds": [...], "id"?, "type"?,
  "severity"?, "answer"?, ...}]``. A missing id becomes ``q001``, ``q002``, ...
  (from the 1-based position); keys not named here are kept in
  :attr:`EvalQuery.extra`. ``relevantIds`` must be present; ``[]`` marks a
  question the documents cannot answer;
* a BEIR-style folder: ``queries.jsonl`` (``{"_id", "text"}`` per line) and
  ``qrels/test.tsv`` (``query-id corpus-id score``, tab-separated, header
  optional; a score above 0 is relevant). Without ``qrels/test.tsv`` the only
  ``qrels/*.tsv`` is used. The graded scores are kept in
  ``extra["relevance"]``. BEIR queries with no relevant document in the qrels
  are **skipped**: they are left out of the returned list and their ids are in
  its :attr:`Evaluation.skipped` attribute.

Bad input raises a one-line :class:`GabaritoError` naming the file and the
record (its 1-based position, or line number in ``.jsonl``/``.tsv`` files, and
its id), and nothing is returned. :func:`corpus_sha256` and
:func:`evaluation_sha256` hash the parsed content (canonical JSON, sorted keys;
the order of the records counts) for run records.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_text

__all__ = [
    "Document",
    "EvalQuery",
    "Evaluation",
    "load_documents",
    "load_evaluation",
    "corpus_sha256",
    "evaluation_sha256",
]


@dataclass(frozen=True)
class Document:
    """One searchable document: ``text`` is what gets segmented and searched."""

    id: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class EvalQuery:
    """One question and the ids of the documents that answer it (empty: unanswerable)."""

    id: str
    query: str
    relevant_ids: tuple[str, ...]
    type: str = ""
    severity: str = ""
    answer: str = ""
    extra: dict = field(default_factory=dict, hash=False)


class Evaluation(list):
    """The queries of an evaluation (a ``list`` of :class:`EvalQuery`).

    ``path`` is where they were read from; ``skipped`` holds the ids of the BEIR
    queries that were left out because the qrels give them no relevant document
    (always empty for a JSON evaluation file).
    """

    def __init__(self, queries: Iterable[EvalQuery] = (), *, path: str | Path | None = None,
                 skipped: Iterable[str] = ()):
        super().__init__(queries)
        self.path = path
        self.skipped: tuple[str, ...] = tuple(skipped)


# --- reading ---------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_H1 = re.compile(r"^#[ \t]+(?P<title>.*?)[ \t#]*$")


def _read_text(path: Path, what: str) -> str:
    """The file as text: strict UTF-8 (the error gives the byte offset), BOM removed."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise GabaritoError(f"{what} not found", path=path) from None
    except IsADirectoryError:
        raise GabaritoError(f"{what} is a folder, expected a file", path=path) from None
    except OSError as exc:
        raise GabaritoError(f"cannot read {what} ({exc.strerror or exc})", path=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"not valid UTF-8 at byte {exc.start}", path=path) from None
    return text[1:] if text.startswith("\ufeff") else text


def _read_json_list(path: Path, what: str) -> list:
    text = _read_text(path, what)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GabaritoError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                            path=path) from None
    if not isinstance(data, list):
        raise GabaritoError(f"expected a JSON list of records, got a JSON {_json_kind(data)}", path=path)
    return data


def _read_jsonl(path: Path, what: str) -> list[tuple[int, object]]:
    """``(line number, parsed value)`` for each non-blank line."""
    out = []
    for lineno, line in enumerate(_read_text(path, what).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            out.append((lineno, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise GabaritoError(f"invalid JSON: {exc.msg}", path=path, record=f"line {lineno}") from None
    return out


def _json_kind(value: object) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def _as_id(value: object) -> str | None:
    """A usable id: a non-empty string without surrounding blanks, or an integer (made a string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip() and value == value.strip():
        return value
    return None


def _label(index: int, rid: str | None) -> str:
    return f"{index} ({rid})" if rid is not None else str(index)


# --- documents -------------------------------------------------------------------------------

def load_documents(path: str | Path) -> list[Document]:
    """Load documents from a JSON list file, a Markdown folder, or a BEIR folder / ``corpus.jsonl``."""
    path = Path(path)
    if path.is_dir():
        if (path / "corpus.jsonl").is_file():
            return _load_beir_corpus(path / "corpus.jsonl")
        return _load_markdown_folder(path)
    if not path.exists():
        raise GabaritoError("documents not found", path=path)
    if path.suffix.lower() == ".jsonl":
        return _load_beir_corpus(path)
    return _load_json_documents(path)


def _check_documents(path: Path, docs: list[tuple[str, Document]]) -> list[Document]:
    """Refuse duplicate ids and empty texts; ``docs`` holds ``(record label index, document)``."""
    seen: dict[str, str] = {}
    for where, doc in docs:
        label = f"{where} ({doc.id})"
        if not doc.text.strip():
            raise GabaritoError("document text is empty", path=path, record=label)
        if doc.id in seen:
            raise GabaritoError(f"duplicate document id {doc.id!r} (first at record {seen[doc.id]})",
                                path=path, record=label)
        seen[doc.id] = where
    if not docs:
        raise GabaritoError("no documents", path=path)
    return [doc for _, doc in docs]


def _load_json_documents(path: Path) -> list[Document]:
    data = _read_json_list(path, "documents file")
    docs = []
    for i, rec in enumerate(data, start=1):
        if not isinstance(rec, dict):
            raise GabaritoError(f"expected an object, got a JSON {_json_kind(rec)}", path=path, record=i)
        did = _as_id(rec.get("id"))
        if did is None:
            raise GabaritoError("missing or empty 'id' (a non-empty string)", path=path, record=i)
        text = rec.get("text")
        title = rec.get("title", "")
        if not isinstance(text, str):
            raise GabaritoError("'text' is missing or not a string", path=path, record=_label(i, did))
        if title is None:
            title = ""
        if not isinstance(title, str):
            raise GabaritoError("'title' is not a string", path=path, record=_label(i, did))
        docs.append((str(i), Document(did, text, title.strip())))
    return _check_documents(path, docs)


def _load_beir_corpus(path: Path) -> list[Document]:
    docs = []
    for lineno, rec in _read_jsonl(path, "corpus file"):
        if not isinstance(rec, dict):
            raise GabaritoError(f"expected an object, got a JSON {_json_kind(rec)}", path=path, record=lineno)
        did = _as_id(rec.get("_id"))
        if did is None:
            raise GabaritoError("missing or empty '_id'", path=path, record=lineno)
        text = rec.get("text")
        title = rec.get("title") or ""
        if not isinstance(text, str):
            raise GabaritoError("'text' is missing or not a string", path=path, record=_label(lineno, did))
        if not isinstance(title, str):
            raise GabaritoError("'title' is not a string", path=path, record=_label(lineno, did))
        docs.append((str(lineno), Document(did, text, title.strip())))
    return _check_documents(path, docs)


def markdown_title(text: str) -> str:
    """The first ``# `` heading outside code fences, or ``""``."""
    in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            m = _H1.match(line)
            if m:
                return m.group("title").strip()
    return ""


def _load_markdown_folder(folder: Path) -> list[Document]:
    files = sorted(
        (p for p in folder.rglob("*.md")
         if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)),
        key=lambda p: p.relative_to(folder).as_posix(),
    )
    if not files:
        raise GabaritoError("folder holds no Markdown (*.md) files and no corpus.jsonl", path=folder)
    docs = []
    for i, f in enumerate(files, start=1):
        did = f.relative_to(folder).with_suffix("").as_posix()
        text = _read_text(f, "Markdown file").replace("\r\n", "\n").replace("\r", "\n")
        if not text.strip():
            raise GabaritoError("document text is empty", path=f, record=_label(i, did))
        docs.append((str(i), Document(did, text, markdown_title(text))))
    return _check_documents(folder, docs)


# --- evaluation ------------------------------------------------------------------------------

def load_evaluation(path: str | Path, documents: Iterable[Document | str] | None = None,
                    *, split: str = "test") -> Evaluation:
    """Load and check evaluation queries from a JSON list file or a BEIR folder.

    With ``documents`` (the corpus, or its ids) every relevant id must name one
    of them and no query may list more relevant ids than there are documents.
    ``split`` picks ``qrels/<split>.tsv`` in a BEIR folder.
    """
    path = Path(path)
    doc_ids: set[str] | None = None
    n_docs = 0
    if documents is not None:
        ids = [d.id if isinstance(d, Document) else str(d) for d in documents]
        doc_ids, n_docs = set(ids), len(ids)
    if path.is_dir():
        return _load_beir_evaluation(path, doc_ids, n_docs, split)
    if not path.exists():
        raise GabaritoError("evaluation file not found", path=path)
    return _load_json_evaluation(path, doc_ids, n_docs)


def _check_relevant(path: Path, label: str, relevant: Sequence[str], doc_ids: set[str] | None,
                    n_docs: int) -> None:
    if doc_ids is None:
        return
    if len(relevant) > n_docs:
        raise GabaritoError(
            f"{len(relevant)} relevant ids is larger than the corpus can answer ({n_docs} documents)",
            path=path, record=label)
    for rid in relevant:
        if rid not in doc_ids:
            raise GabaritoError(f"relevant id {rid!r} is not in the documents", path=path, record=label)


def _finish(path: Path, queries: list[EvalQuery], skipped: Sequence[str] = ()) -> Evaluation:
    if not any(q.relevant_ids for q in queries):
        extra = f" ({len(skipped)} queries without qrels were skipped)" if skipped else ""
        raise GabaritoError(f"no query has a relevant id, so nothing can be measured{extra}", path=path)
    return Evaluation(queries, path=path, skipped=skipped)


_KNOWN_KEYS = ("id", "query", "relevantIds", "type", "severity", "answer")


def _load_json_evaluation(path: Path, doc_ids: set[str] | None, n_docs: int) -> Evaluation:
    data = _read_json_list(path, "evaluation file")
    queries: list[EvalQuery] = []
    seen: dict[str, int] = {}
    for i, rec in enumerate(data, start=1):
        if not isinstance(rec, dict):
            raise GabaritoError(f"expected an object, got a JSON {_json_kind(rec)}", path=path, record=i)
        if "id" in rec and rec["id"] is not None:
            qid = _as_id(rec["id"])
            if qid is None:
                raise GabaritoError("'id' must be a non-empty string", path=path, record=i)
        else:
            qid = f"q{i:03d}"
        label = _label(i, qid)
        if qid in seen:
            raise GabaritoError(f"duplicate query id {qid!r} (first at record {seen[qid]})",
                                path=path, record=label)
        query = rec.get("query")
        if not isinstance(query, str) or not query.strip():
            raise GabaritoError("empty query", path=path, record=label)
        if "relevantIds" not in rec:
            raise GabaritoError("missing 'relevantIds' (use [] for a query the documents cannot answer)",
                                path=path, record=label)
        relevant = rec["relevantIds"]
        if not isinstance(relevant, list) or not all(isinstance(r, str) and r for r in relevant):
            raise GabaritoError("'relevantIds' must be a list of non-empty strings", path=path, record=label)
        dupes = sorted({r for r in relevant if relevant.count(r) > 1})
        if dupes:
            raise GabaritoError(f"'relevantIds' repeats {', '.join(map(repr, dupes))}", path=path, record=label)
        _check_relevant(path, label, relevant, doc_ids, n_docs)
        strings = {}
        for key in ("type", "severity", "answer"):
            value = rec.get(key, "")
            if value is None:
                value = ""
            if not isinstance(value, str):
                raise GabaritoError(f"{key!r} must be a string", path=path, record=label)
            strings[key] = value
        extra = {k: v for k, v in rec.items() if k not in _KNOWN_KEYS}
        seen[qid] = i
        queries.append(EvalQuery(qid, query.strip(), tuple(relevant), extra=extra, **strings))
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


def _read_qrels(path: Path) -> tuple[dict[str, dict[str, int]], dict[tuple[str, str], int]]:
    """``{query id: {document id: score}}`` for the rows with a score above 0, in file order,
    and the line number of each ``(query id, document id)`` row."""
    out: dict[str, dict[str, int]] = {}
    lines: dict[tuple[str, str], int] = {}
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
        try:
            score = int(score_text)
        except ValueError:
            try:
                score = float(score_text)
            except ValueError:
                raise GabaritoError(f"score {score_text!r} is not a number", path=path, record=label) from None
        lines.setdefault((qid, did), lineno)
        if score > 0:
            rel = out.setdefault(qid, {})
            rel[did] = max(score, rel.get(did, score))
    return out, lines


def _load_beir_evaluation(folder: Path, doc_ids: set[str] | None, n_docs: int, split: str) -> Evaluation:
    qpath = folder / "queries.jsonl"
    if not qpath.is_file():
        raise GabaritoError("folder holds no queries.jsonl (expected a BEIR folder)", path=folder)
    qrels_path = _qrels_file(folder, split)
    qrels, qrel_lines = _read_qrels(qrels_path)
    queries: list[EvalQuery] = []
    skipped: list[str] = []
    seen: dict[str, int] = {}
    for lineno, rec in _read_jsonl(qpath, "queries file"):
        if not isinstance(rec, dict):
            raise GabaritoError(f"expected an object, got a JSON {_json_kind(rec)}", path=qpath, record=lineno)
        qid = _as_id(rec.get("_id"))
        if qid is None:
            raise GabaritoError("missing or empty '_id'", path=qpath, record=lineno)
        label = _label(lineno, qid)
        if qid in seen:
            raise GabaritoError(f"duplicate query id {qid!r} (first at line {seen[qid]})",
                                path=qpath, record=label)
        seen[qid] = lineno
        text = rec.get("text")
        if not isinstance(text, str) or not text.strip():
            raise GabaritoError("empty query", path=qpath, record=label)
        rel = qrels.get(qid)
        if not rel:
            skipped.append(qid)
            continue
        relevant = tuple(rel)
        if doc_ids is not None:
            if len(relevant) > n_docs:
                _check_relevant(qpath, label, relevant, doc_ids, n_docs)
            for did in relevant:
                if did not in doc_ids:
                    raise GabaritoError(f"relevant id {did!r} of query {qid!r} is not in the documents",
                                        path=qrels_path, record=f"line {qrel_lines[(qid, did)]} ({qid} {did})")
        extra = {k: v for k, v in rec.items() if k not in ("_id", "text")}
        extra["relevance"] = dict(rel)
        queries.append(EvalQuery(qid, text.strip(), relevant, extra=extra))
    unknown = [key for key in qrel_lines if key[0] not in seen]
    if unknown:
        qid, did = unknown[0]
        raise GabaritoError(f"query id {qid!r} is not in queries.jsonl", path=qrels_path,
                            record=f"line {qrel_lines[unknown[0]]} ({qid} {did})")
    return _finish(qpath, queries, skipped)


# --- hashes ----------------------------------------------------------------------------------

def _canonical(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def corpus_sha256(documents: Iterable[Document]) -> str:
    """sha256 of the documents' canonical JSON (id, title, text; order counts)."""
    return sha256_text(_canonical([{"id": d.id, "title": d.title, "text": d.text} for d in documents]))


def evaluation_sha256(queries: Iterable[EvalQuery]) -> str:
    """sha256 of the queries' canonical JSON (every field, ``extra`` included; order counts)."""
    return sha256_text(_canonical([
        {"id": q.id, "query": q.query, "relevant_ids": list(q.relevant_ids), "type": q.type,
         "severity": q.severity, "answer": q.answer, "extra": q.extra}
        for q in queries
    ]))
