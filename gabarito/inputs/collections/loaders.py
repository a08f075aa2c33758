"""The five collections: one reader per fetched folder, :data:`COLLECTIONS` and :func:`load_collection`;
:func:`load_trec_layout` reads any collection in TREC form (NPL's)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.inputs.collections.collection import CRANFIELD_GRADES, Collection, _assemble, _check_qrels
from gabarito.inputs.collections.files import _lines, _read, _Tarball
from gabarito.inputs.collections.glasgow import _glasgow_documents, _glasgow_queries, _text
from gabarito.inputs.collections.qrels import parse_qrels
from gabarito.inputs.collections.trec import parse_trec_documents, parse_trec_topics
from gabarito.inputs.datasets import fetch
from gabarito.inputs.documents import Document
from gabarito.notes import note


def _load_cranfield(folder: Path) -> Collection:
    tar = _Tarball(folder / "cran.tar.gz")
    try:
        notes = [note("collection.doc_text_cranfield"), note("collection.query_text_abstract")]
        text, source = tar.read("cran.all.1400")
        documents = _glasgow_documents(text, source, "TABW", notes)
        text, qsource = tar.read("cran.qry")
        qrecs = _glasgow_queries(text, qsource, "W", notes)
        notes.insert(2, note("collection.query_ids_positions", n=len(qrecs), file="cran.qry"))
        notes.insert(3, note("collection.grades_reversed", mapping=[[c, g] for c, g in CRANFIELD_GRADES.items()]))
        raw_queries = [(str(pos), " ".join(r.fields["W"].split()),
                        {"file_id": r.id}) for pos, r in enumerate(qrecs, start=1)]
        text, rsource = tar.read("cranqrel")
        rows = parse_qrels(text, rsource, "cranfield", grades=CRANFIELD_GRADES)
    finally:
        tar.close()
    codes_by_line = {}
    for lineno, line in enumerate(_lines(text), start=1):
        cols = line.split()
        if cols:
            codes_by_line[lineno] = int(cols[2])
    qrels = _check_qrels(rows, rsource, {q[0] for q in raw_queries}, {d.id for d in documents},
                         what_query="query number")
    source_docs: dict[str, list[str]] = {}
    for lineno, qid, did, _grade in rows:
        if codes_by_line[lineno] == -1:
            source_docs.setdefault(qid, []).append(did)
    raw_queries = [(qid, qtext, {**extra, "source_documents": source_docs.get(qid, [])})
                   for qid, qtext, extra in raw_queries]
    notes.append(note("collection.source_documents", n=sum(map(len, source_docs.values()))))
    return _assemble("cranfield", documents, raw_queries, qrels, notes,
                     "documents: .T + .W; queries: .W")


def _load_glasgow_binary(name: str, tarball: str, prefix: str, doc_fields: str, query_fields: str,
                         layout: str, folder: Path, notes: list[dict], text_fields: str) -> Collection:
    tar = _Tarball(folder / tarball)
    try:
        text, source = tar.read(f"{prefix}.ALL")
        documents = _glasgow_documents(text, source, doc_fields, notes)
        text, qsource = tar.read(f"{prefix}.QRY")
        qrecs = _glasgow_queries(text, qsource, query_fields, notes)
        text, rsource = tar.read(f"{prefix}.REL")
        rows = parse_qrels(text, rsource, layout)
        unused = [n for n in tar.names if n not in {f"{prefix}.ALL", f"{prefix}.QRY", f"{prefix}.REL"}]
    finally:
        tar.close()
    raw_queries = [(str(int(r.id)), " ".join(_text(r, "T", "W").split()), {}) for r in qrecs]
    qrels = _check_qrels(rows, rsource, {q[0] for q in raw_queries}, {d.id for d in documents})
    if unused:
        notes.append(note("collection.files_not_used", files=unused))
    return _assemble(name, documents, raw_queries, qrels, notes, text_fields)


def _load_cisi(folder: Path) -> Collection:
    notes = [note("collection.doc_text_cisi"), note("collection.query_text_cisi", first=58, last=112),
             note("collection.qrels_all_relevant", file="CISI.REL", layout="qid docid 0 0.000000")]
    return _load_glasgow_binary("cisi", "cisi.tar.gz", "CISI", "TABWXKC", "TABW", "smart", folder,
                                notes, "documents: .T + .W; queries: .T + .W (.W only when untitled)")


def _load_medline(folder: Path) -> Collection:
    notes = [note("collection.doc_text_abstract_only", file="MED.ALL"), note("collection.query_text_abstract"),
             note("collection.qrels_trec", file="MED.REL", layout="qid 0 docid 1")]
    return _load_glasgow_binary("medline", "med.tar.gz", "MED", "W", "W", "trec", folder, notes,
                                "documents: .W; queries: .W")


def _load_adi(folder: Path) -> Collection:
    notes = [note("collection.doc_text_title_abstract"), note("collection.query_text_abstract"),
             note("collection.qrels_all_relevant", file="ADI.REL", layout="qid docid 0 0.000000")]
    return _load_glasgow_binary("adi", "adi.tar.gz", "ADI", "TAW", "W", "smart", folder, notes,
                                "documents: .T + .W; queries: .W")


def _once(seen: dict[str, int], key: str, line: int, what: str, source: str) -> None:
    """Record where ``key`` first appears; a repeat is a one-line error naming both lines."""
    if key in seen:
        raise GabaritoError(f"{what} repeats the one at line {seen[key]}", path=source, record=f"line {line}")
    seen[key] = line


def load_trec_layout(name: str, folder: Path, *, documents: str, topics: str, qrels: str,
                     notes: list[dict], text_fields: str) -> Collection:
    """A collection in TREC form inside its fetched ``folder``: ``<DOC>``/``<DOCNO>`` documents,
    ``<top>``/``<num>``/``<title>`` topics and ``qid 0 docid grade`` judgments, at those paths
    (NPL's layout; a new collection in this form needs no reader of its own beyond this call)."""
    text, source = _read(folder / documents)
    docs, seen = [], {}
    for line, docno, body in parse_trec_documents(text, source):
        _once(seen, docno, line, f"DOCNO {docno}", source)
        docs.append(Document(docno, body, ""))
    text, qsource = _read(folder / topics)
    raw_queries, qseen = [], {}
    for line, num, title in parse_trec_topics(text, qsource):
        _once(qseen, num, line, f"query {num}", qsource)
        raw_queries.append((num, title, {}))
    text, rsource = _read(folder / qrels)
    rows = parse_qrels(text, rsource, "trec")
    judged = _check_qrels(rows, rsource, set(qseen), set(seen))
    return _assemble(name, docs, raw_queries, judged, notes, text_fields)


def _load_npl(folder: Path) -> Collection:
    notes = [note("collection.doc_text_npl"), note("collection.query_text_npl"),
             note("collection.qrels_trec", layout="qid 0 docid 1")]
    return load_trec_layout("npl", folder, documents="corpus/doc-text.trec", topics="query-text.trec",
                            qrels="qrels", notes=notes, text_fields="documents: text after <DOCNO>; queries: <title>")


COLLECTIONS: dict[str, Callable[[Path], Collection]] = {
    "cranfield": _load_cranfield,
    "cisi": _load_cisi,
    "medline": _load_medline,
    "npl": _load_npl,
    "adi": _load_adi,
}
"""Collection name (also its key in ``data/datasets.json``) -> reader of the fetched folder."""


def load_collection(name: str, *, mirror: str | Path | None = None,
                    dest: str | Path | None = None) -> Collection:
    """Fetch (verified by sha256) and read one of :data:`COLLECTIONS`.

    ``mirror`` is a local mirror folder (else ``$GABARITO_DATA_MIRROR``, else
    the upstream URLs); ``dest`` the cache folder (default as in
    :func:`gabarito.inputs.datasets.fetch`).
    """
    if name not in COLLECTIONS:
        raise GabaritoError(f"unknown collection {name!r} (known: {', '.join(COLLECTIONS)})")
    folder = fetch(name, mirror=mirror, dest=dest)
    return COLLECTIONS[name](folder)
