"""The classic test collections, read from their original files as distributed.

Five collections are known (:data:`COLLECTIONS`): ``cranfield``, ``cisi``,
``medline``, ``npl`` and ``adi``. :func:`load_collection` fetches the files
named in ``data/datasets.json`` (from the upstream URL or a local mirror,
sha256-verified, see :mod:`gabarito.inputs.datasets`) and reads the tarballs in
place, without extracting them.

What becomes :attr:`Document.text` and :attr:`EvalQuery.query`:

* Glasgow ``.I/.T/.A/.B/.W`` files (Cranfield, CISI, MEDLINE, ADI): a
  document's text is its title (``.T``) and its abstract (``.W``), separated by
  a blank line; :attr:`Document.title` is the ``.T`` alone. Authors (``.A``),
  bibliographic data (``.B``), keywords (``.K``), categories (``.C``) and
  CISI's cross-references (``.X``) are read and left out. MEDLINE has only
  ``.W``. Lines are kept as written (trailing blanks and carriage returns
  removed). A query's text is its ``.W``, preceded by its ``.T`` when it has
  one (CISI queries 58-112 are paper abstracts with a title), with runs of
  blanks and line breaks turned into single spaces.
* NPL (TREC form by the Terrier team): the text between ``</DOCNO>`` and
  ``</DOC>`` (there is no title); a query's text is its ``<title>``.

Relevance: ``Collection.qrels`` is ``{query id: {document id: grade}}`` with
integer grades, 0 meaning judged not relevant (only Cranfield has such rows).
A query's :attr:`EvalQuery.relevant_ids` are the documents with grade >= 1 in
file order; ``extra["relevance"]`` holds their grades. Queries with no
relevant document are kept and their ids are in :attr:`Collection.unjudged`.

Cranfield needs two corrections that are easy to miss:

* ``cranqrel`` numbers the queries 1..225 by their **position** in
  ``cran.qry``, whose own ``.I`` numbers run 001..365 with gaps. Query ids
  here are the positions; the ``.I`` number is in ``extra["file_id"]``.
* ``cranqrel``'s codes run the wrong way for graded measures (1 = complete
  answer ... 4 = minimum interest, ``cranqrel.readme``) and include -1;
  :data:`CRANFIELD_GRADES` maps them.

Any malformed record raises a one-line :class:`GabaritoError` naming the file
(``tarball:member`` for a file inside a tarball) and the line.
"""

from __future__ import annotations

import bisect
import re
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gabarito.inputs.datasets import fetch
from gabarito.inputs.documents import Document, EvalQuery
from gabarito.errors import GabaritoError

__all__ = [
    "COLLECTIONS",
    "CRANFIELD_GRADES",
    "Collection",
    "GlasgowRecord",
    "GradeMap",
    "load_collection",
    "parse_glasgow",
    "parse_qrels",
    "parse_trec_documents",
    "parse_trec_topics",
]


class GradeMap(dict):
    """A collection's own relevance codes mapped to graded relevance (0 = not relevant).

    ``labels`` gives each code's meaning in the collection's documentation;
    :meth:`describe` renders one line per code for a page.
    """

    def __init__(self, mapping: dict[int, int], *, labels: dict[int, str], doc: str):
        super().__init__(mapping)
        self.labels = dict(labels)
        self.__doc__ = doc

    def describe(self) -> list[str]:
        return [f"code {code:>2} -> grade {grade}: {self.labels.get(code, '')}".rstrip(": ")
                for code, grade in self.items()]


CRANFIELD_GRADES = GradeMap(
    {1: 4, 2: 3, 3: 2, 4: 1, 5: 0, -1: 0},
    labels={
        1: "references which are a complete answer to the question",
        2: "references of a high degree of relevance, the lack of which either would have made the "
           "research impracticable or would have resulted in a considerable amount of extra work",
        3: "references which were useful, either as general background to the work or as suggesting "
           "methods of tackling certain aspects of the work",
        4: "references of minimum interest, for example, those that have been included from an "
           "historical viewpoint",
        5: "references of no interest (absent from the Glasgow cranqrel)",
        -1: "not a relevance grade; one row per query, naming the document the question was drawn "
            "from (query 1 'similarity laws ... aeroelastic models' -> document 486 'similarity laws "
            "for aerothermoelastic testing')",
    },
    doc="""Cranfield relevance codes (``cranqrel``, third column) -> graded relevance.

Cleverdon's codes, quoted in ``cranqrel.readme``, put the best documents at 1
("a complete answer to the question") and the weakest at 4 ("minimum
interest"); 5 ("no interest") is not in the file. Graded measures such as
nDCG need higher = better, so the scale is reversed: 1->4, 2->3, 3->2, 4->1.
The Glasgow ``cranqrel`` also has exactly one row coded -1 per query (225
rows); it names the document the question was drawn from and is mapped to 0
(judged, not relevant), as is 5 in copies that carry it. Any other code is an
error. In the mirrored file: 128 rows coded 1, 387 coded 2, 734 coded 3,
363 coded 4, 225 coded -1 (1,837 rows).
""",
)


@dataclass
class Collection:
    """A test collection: documents, queries, graded judgments and what a reader should know.

    ``notes`` are one-line remarks (text fields used, grade mapping, anomalies
    in the source files and how they were handled). ``unjudged`` holds the ids
    of queries without any relevant document; they stay in ``queries`` so a
    study can count them, and :meth:`judged_queries` leaves them out.
    """

    name: str
    documents: list[Document]
    queries: list[EvalQuery]
    qrels: dict[str, dict[str, int]]
    notes: list[str] = field(default_factory=list)
    unjudged: tuple[str, ...] = ()
    text_fields: str = ""

    def judged_queries(self) -> list[EvalQuery]:
        return [q for q in self.queries if q.relevant_ids]


# --- Glasgow .I/.T/.A/.B/.W records ------------------------------------------------------------

_MARKER = re.compile(r"^\.([A-Za-z])(?:[ \t]+(.*?))?[ \t]*$")
_MARKER_START = re.compile(r"^\.[A-Za-z](?:[ \t]|$)")


@dataclass
class GlasgowRecord:
    """One ``.I`` record: its id as written, its line, and its sections (marker -> text)."""

    id: str
    line: int
    fields: dict[str, str]
    field_lines: dict[str, int]


def _lines(text: str) -> list[str]:
    out = text.split("\n")
    if out and out[-1] == "":
        out.pop()
    return [line.rstrip("\r") for line in out]


def parse_glasgow(text: str, source: str, fields: Iterable[str], *,
                  notes: list[str] | None = None) -> list[GlasgowRecord]:
    """Split a Glasgow/SMART file into records.

    A record starts at ``.I <number>``; a section starts at a line holding only
    a field marker (``.T``, ``.W``, ...; trailing blanks allowed) and runs to the
    next marker. ``fields`` are the markers allowed besides ``.I``. A repeated
    section is joined to the earlier one with a newline (CISI lists one author
    per ``.A``), except that an exact repeat is dropped (ADI 67 has its title
    twice) and a ``.T``/``.A``/``.B`` repeated after the record's ``.W`` has
    begun is taken as a stray line of the abstract and continues ``.W``
    (Cranfield 240). Each such case is described in ``notes``.

    Errors (one line, ``source`` and line number): text before the first
    ``.I``, ``.I`` without a number or repeated, an unknown marker, a marker
    followed by text.
    """
    allowed = {f.upper() for f in fields}
    label = str(source).replace("\\", "/").rsplit("/", 1)[-1]  # notes name the file, not the cache path
    records: list[GlasgowRecord] = []
    seen: dict[str, int] = {}
    current: GlasgowRecord | None = None
    chunks: dict[str, list[list[str]]] = {}
    section: list[str] | None = None
    section_name = ""

    def close() -> None:
        if current is None:
            return
        for name, parts in chunks.items():
            texts: list[str] = []
            for part in parts:
                body = "\n".join(part).strip()
                if body and " ".join(body.split()) in {" ".join(t.split()) for t in texts}:
                    if notes is not None:
                        notes.append(f"{label}: record {current.id}: '.{name}' given twice with the "
                                     "same text; the repeat is dropped")
                    continue
                texts.append(body)
            current.fields[name] = "\n".join(t for t in texts if t)

    for lineno, line in enumerate(_lines(text), start=1):
        if _MARKER_START.match(line):
            m = _MARKER.match(line)
            marker = m.group(1) if m else line[1]
            rest = (m.group(2) or "") if m else ""
            if marker.upper() != marker:
                raise GabaritoError(f"unknown field marker '.{marker}'", path=source, record=f"line {lineno}")
            if marker == "I":
                if not re.fullmatch(r"\d+", rest):
                    what = f"'{rest}'" if rest else "nothing"
                    raise GabaritoError(f".I must be followed by a record number, found {what}",
                                        path=source, record=f"line {lineno}")
                rid = str(int(rest))
                if rid in seen:
                    raise GabaritoError(f"record .I {rest} repeats the one at line {seen[rid]}",
                                        path=source, record=f"line {lineno}")
                close()
                seen[rid] = lineno
                current = GlasgowRecord(rest, lineno, {}, {})
                records.append(current)
                chunks = {}
                section, section_name = None, ""
                continue
            if marker not in allowed:
                known = ", ".join("." + f for f in ["I", *sorted(allowed)])
                raise GabaritoError(f"unknown field marker '.{marker}' (expected one of {known})",
                                    path=source, record=f"line {lineno}")
            if rest:
                raise GabaritoError(f"field marker '.{marker}' followed by text {rest[:40]!r}",
                                    path=source, record=f"line {lineno}")
            if current is None:
                raise GabaritoError(f"field '.{marker}' before the first .I record", path=source,
                                    record=f"line {lineno}")
            if marker in chunks and marker in "TAB" and section_name == "W":
                if notes is not None:
                    notes.append(f"{label} line {lineno}: record {current.id}: '.{marker}' inside the "
                                 "abstract repeats an earlier field; its lines are kept as abstract text")
                continue
            if marker == "W" and marker in chunks and notes is not None:
                notes.append(f"{label} line {lineno}: record {current.id}: a second '.W' section; "
                             "both are kept, in file order")
            section = []
            chunks.setdefault(marker, []).append(section)
            current.field_lines.setdefault(marker, lineno)
            section_name = marker
            continue
        if current is None:
            if line.strip():
                raise GabaritoError("text before the first .I record", path=source, record=f"line {lineno}")
            continue
        if section is None:
            if line.strip():
                raise GabaritoError(f"text after .I {current.id} before any field marker", path=source,
                                    record=f"line {lineno}")
            continue
        section.append(line.rstrip())
    close()
    if not records:
        raise GabaritoError("no .I records", path=source)
    return records


# --- relevance judgments -----------------------------------------------------------------------

def parse_qrels(text: str, source: str, layout: str, *,
                grades: dict[int, int] | None = None) -> list[tuple[int, str, str, int]]:
    """Judgment rows ``(line, query id, document id, grade)`` in file order.

    ``layout``: ``"trec"`` (``qid 0 docid grade``; MEDLINE's MED.REL, NPL),
    ``"smart"`` (``qid docid 0 0.000000``: every listed pair relevant, grade 1;
    CISI.REL, ADI.REL) or ``"cranfield"`` (``qid docid code``, the code mapped
    through ``grades``). Numeric ids lose leading zeros. Blank lines are
    skipped; anything else malformed raises with the line number.
    """
    want = {"trec": 4, "smart": 4, "cranfield": 3}[layout]
    rows: list[tuple[int, str, str, int]] = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(_lines(text), start=1):
        cols = line.split()
        if not cols:
            continue
        where = f"line {lineno}"
        if len(cols) != want:
            raise GabaritoError(f"expected {want} columns ({_QREL_COLUMNS[layout]}), found {len(cols)}",
                                path=source, record=where)
        if layout == "trec":
            qid, did, grade_text = cols[0], cols[2], cols[3]
        else:
            qid, did, grade_text = cols[0], cols[1], cols[2]
        for what, value in (("query id", qid), ("document id", did)):
            if not value.isdigit():
                raise GabaritoError(f"{what} {value!r} is not a number", path=source, record=where)
        qid, did = str(int(qid)), str(int(did))
        try:
            code = int(grade_text)
        except ValueError:
            raise GabaritoError(f"relevance {grade_text!r} is not an integer", path=source,
                                record=where) from None
        if layout == "smart":
            grade = 1
        elif layout == "cranfield":
            if grades is None or code not in grades:
                known = ", ".join(map(str, grades or {}))
                raise GabaritoError(f"unknown relevance code {code} (known: {known})", path=source,
                                    record=where)
            grade = grades[code]
        else:
            if code < 0:
                raise GabaritoError(f"negative relevance {code}", path=source, record=where)
            grade = code
        if (qid, did) in seen:
            raise GabaritoError(f"query {qid} document {did} judged again (first at line "
                                f"{seen[(qid, did)]})", path=source, record=where)
        seen[(qid, did)] = lineno
        rows.append((lineno, qid, did, grade))
    return rows


_QREL_COLUMNS = {
    "trec": "query-id 0 doc-id relevance",
    "smart": "query-id doc-id 0 0.0",
    "cranfield": "query-number doc-id code",
}


# --- TREC-style files (NPL) --------------------------------------------------------------------

class _LineIndex:
    """Line numbers of character offsets, without rescanning the text for each lookup."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def __call__(self, pos: int) -> int:
        return bisect.bisect_right(self.starts, pos)


def _blocks(text: str, source: str, tag: str) -> list[tuple[int, str]]:
    """``(line, inner text)`` of each ``<tag>...</tag>``; only blanks may lie between them."""
    pattern = re.compile(rf"<{tag}>(.*?)</{tag}>", re.DOTALL | re.IGNORECASE)
    line_of = _LineIndex(text)
    out, pos = [], 0
    for m in pattern.finditer(text):
        gap = text[pos:m.start()]
        if gap.strip():
            off = pos + len(gap) - len(gap.lstrip())
            raise GabaritoError(f"text outside <{tag}>...</{tag}>", path=source,
                                record=f"line {line_of(off)}")
        out.append((line_of(m.start()), m.group(1)))
        pos = m.end()
    rest = text[pos:]
    if rest.strip():
        off = pos + len(rest) - len(rest.lstrip())
        what = f"<{tag}> without </{tag}>" if rest.lstrip().lower().startswith(f"<{tag.lower()}>") \
            else f"text outside <{tag}>...</{tag}>"
        raise GabaritoError(what, path=source, record=f"line {line_of(off)}")
    for line, inner in out:
        nested = re.search(rf"<{tag}>", inner, re.IGNORECASE)
        if nested:
            raise GabaritoError(f"<{tag}> opened again before </{tag}>", path=source,
                                record=f"line {line + inner.count(chr(10), 0, nested.start())}")
    return out


def _field(inner: str, tag: str, source: str, line: int) -> str:
    found = re.findall(rf"<{tag}>(.*?)</{tag}>", inner, re.DOTALL | re.IGNORECASE)
    if len(found) != 1:
        problem = "missing" if not found else f"given {len(found)} times"
        raise GabaritoError(f"<{tag}> {problem}", path=source, record=f"line {line}")
    return found[0].strip()


def parse_trec_documents(text: str, source: str) -> list[tuple[int, str, str]]:
    """``(line, DOCNO, text)`` per ``<DOC>``; the text is what is left once ``<DOCNO>`` is removed."""
    out = []
    for line, inner in _blocks(text, source, "DOC"):
        docno = _field(inner, "DOCNO", source, line)
        if not docno or len(docno.split()) != 1:
            raise GabaritoError(f"bad <DOCNO> {docno!r}", path=source, record=f"line {line}")
        body = re.sub(r"<DOCNO>.*?</DOCNO>", "", inner, count=1, flags=re.DOTALL | re.IGNORECASE)
        if re.search(r"</?[A-Za-z]+>", body):
            raise GabaritoError("unexpected tag inside <DOC>", path=source, record=f"line {line}")
        out.append((line, docno, "\n".join(ln.rstrip() for ln in body.strip("\n").split("\n")).strip()))
    return out


def parse_trec_topics(text: str, source: str) -> list[tuple[int, str, str]]:
    """``(line, num, title)`` per ``<top>``."""
    out = []
    for line, inner in _blocks(text, source, "top"):
        num = _field(inner, "num", source, line)
        if not num.isdigit():
            raise GabaritoError(f"<num> {num!r} is not a number", path=source, record=f"line {line}")
        title = " ".join(_field(inner, "title", source, line).split())
        if not title:
            raise GabaritoError("empty <title>", path=source, record=f"line {line}")
        out.append((line, str(int(num)), title))
    return out


# --- reading files -----------------------------------------------------------------------------

def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"not valid UTF-8 at byte {exc.start}", path=source) from None


class _Tarball:
    def __init__(self, path: Path):
        self.path = path
        try:
            self._tar = tarfile.open(path, "r:*")
        except (OSError, tarfile.TarError) as exc:
            raise GabaritoError(f"cannot open tarball ({exc})", path=path) from None
        self.names = [m.name for m in self._tar.getmembers() if m.isfile()]

    def read(self, member: str) -> tuple[str, str]:
        source = f"{self.path}:{member}"
        try:
            fh = self._tar.extractfile(member)
        except KeyError:
            raise GabaritoError(f"tarball has no member {member!r} (has: {', '.join(self.names)})",
                                path=self.path) from None
        if fh is None:
            raise GabaritoError(f"member {member!r} is not a file", path=self.path)
        return _decode(fh.read(), source), source

    def close(self) -> None:
        self._tar.close()


def _read(path: Path) -> tuple[str, str]:
    try:
        return _decode(path.read_bytes(), str(path)), str(path)
    except OSError as exc:
        raise GabaritoError(f"cannot read file ({exc.strerror or exc})", path=path) from None


def _text(record: GlasgowRecord, *names: str) -> str:
    return "\n\n".join(record.fields[n] for n in names if record.fields.get(n))


def _check_qrels(rows, source: str, query_ids: set[str], doc_ids: set[str],
                 what_query: str = "query") -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for lineno, qid, did, grade in rows:
        if qid not in query_ids:
            raise GabaritoError(f"{what_query} {qid} is not among the {len(query_ids)} queries",
                                path=source, record=f"line {lineno}")
        if did not in doc_ids:
            raise GabaritoError(f"document {did} is not in the collection", path=source,
                                record=f"line {lineno}")
        qrels.setdefault(qid, {})[did] = grade
    return qrels


def _assemble(name: str, documents: list[Document], raw_queries: list[tuple[str, str, dict]],
              qrels: dict[str, dict[str, int]], notes: list[str], text_fields: str) -> Collection:
    queries, unjudged = [], []
    for qid, text, extra in raw_queries:
        rel = {d: g for d, g in qrels.get(qid, {}).items() if g >= 1}
        if not rel:
            unjudged.append(qid)
        queries.append(EvalQuery(qid, text, tuple(rel), extra={**extra, "relevance": rel}))
    if unjudged:
        shown = ", ".join(unjudged[:12]) + (", ..." if len(unjudged) > 12 else "")
        notes.append(f"{len(unjudged)} of {len(queries)} queries have no relevant document "
                     f"(kept; ids in Collection.unjudged: {shown})")
    empty = [d.id for d in documents if not d.text.strip()]
    if empty:
        notes.append(f"{len(empty)} documents are empty in the source (kept with empty text): "
                     + ", ".join(empty))
    return Collection(name, documents, queries, qrels, notes, tuple(unjudged), text_fields)


def _glasgow_documents(text: str, source: str, fields: str, notes: list[str]) -> list[Document]:
    docs = []
    for rec in parse_glasgow(text, source, fields, notes=notes):
        title = " ".join(rec.fields.get("T", "").split())
        docs.append(Document(str(int(rec.id)), _text(rec, "T", "W"), title))
    return docs


def _glasgow_queries(text: str, source: str, fields: str, notes: list[str]) -> list[GlasgowRecord]:
    records = parse_glasgow(text, source, fields, notes=notes)
    for rec in records:
        if not rec.fields.get("W", "").strip():
            raise GabaritoError(f"query .I {rec.id} has no .W text", path=source, record=f"line {rec.line}")
    return records


# --- the collections ---------------------------------------------------------------------------

def _load_cranfield(folder: Path) -> Collection:
    tar = _Tarball(folder / "cran.tar.gz")
    try:
        notes = [("document text = .T title + .W abstract (the Cranfield .W usually repeats the title, "
                 "so title words count twice); authors .A and bibliography .B are not used"),
                 "query text = .W",
                 ("query ids are positions 1..225 in cran.qry, as cranqrel numbers them; the file's .I "
                 "number is in extra['file_id']"),
                 "grades: cranqrel codes reversed for graded measures (CRANFIELD_GRADES): "
                 + ", ".join(f"{c}->{g}" for c, g in CRANFIELD_GRADES.items())]
        text, source = tar.read("cran.all.1400")
        documents = _glasgow_documents(text, source, "TABW", notes)
        text, qsource = tar.read("cran.qry")
        qrecs = _glasgow_queries(text, qsource, "W", notes)
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
    notes.append(f"{sum(map(len, source_docs.values()))} cranqrel rows coded -1 (grade 0) name the "
                 "document each question was drawn from; kept as extra['source_documents']")
    return _assemble("cranfield", documents, raw_queries, qrels, notes,
                     "documents: .T + .W; queries: .W")


def _load_glasgow_binary(name: str, tarball: str, prefix: str, doc_fields: str, query_fields: str,
                         layout: str, folder: Path, notes: list[str], text_fields: str) -> Collection:
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
        notes.append(f"not used: {', '.join(unused)}")
    return _assemble(name, documents, raw_queries, qrels, notes, text_fields)


def _load_cisi(folder: Path) -> Collection:
    notes = [("document text = .T title + .W abstract; authors .A, .B, keywords .K, categories .C and "
             "the .X cross-reference (citation) sections are skipped"),
             ("query text = .T + .W when the query has a title (queries 58-112 are paper abstracts), "
             "else .W; their .A/.B are skipped"),
             "CISI.REL rows 'qid docid 0 0.000000': every listed pair is relevant (grade 1)"]
    return _load_glasgow_binary("cisi", "cisi.tar.gz", "CISI", "TABWXKC", "TABW", "smart", folder,
                                notes, "documents: .T + .W; queries: .T + .W (.W only when untitled)")


def _load_medline(folder: Path) -> Collection:
    notes = ["document text = .W (MED.ALL has no title or other fields)", "query text = .W",
             "MED.REL rows 'qid 0 docid 1' (TREC layout), all grade 1"]
    return _load_glasgow_binary("medline", "med.tar.gz", "MED", "W", "W", "trec", folder, notes,
                                "documents: .W; queries: .W")


def _load_adi(folder: Path) -> Collection:
    notes = ["document text = .T title + .W abstract; authors .A are not used", "query text = .W",
             "ADI.REL rows 'qid docid 0 0.000000': every listed pair is relevant (grade 1)"]
    return _load_glasgow_binary("adi", "adi.tar.gz", "ADI", "TAW", "W", "smart", folder, notes,
                                "documents: .T + .W; queries: .W")


def _load_npl(folder: Path) -> Collection:
    notes = [("document text = the text after <DOCNO> (NPL documents have no title; lower case, "
             "punctuation and numbers already removed in the source)"),
             "query text = <title> (upper case in the source)",
             "qrels 'qid 0 docid 1' (TREC layout), all grade 1"]
    text, source = _read(folder / "corpus" / "doc-text.trec")
    documents, seen = [], {}
    for line, docno, body in parse_trec_documents(text, source):
        if docno in seen:
            raise GabaritoError(f"DOCNO {docno} repeats the one at line {seen[docno]}", path=source,
                                record=f"line {line}")
        seen[docno] = line
        documents.append(Document(docno, body, ""))
    text, qsource = _read(folder / "query-text.trec")
    raw_queries, qseen = [], {}
    for line, num, title in parse_trec_topics(text, qsource):
        if num in qseen:
            raise GabaritoError(f"query {num} repeats the one at line {qseen[num]}", path=qsource,
                                record=f"line {line}")
        qseen[num] = line
        raw_queries.append((num, title, {}))
    text, rsource = _read(folder / "qrels")
    rows = parse_qrels(text, rsource, "trec")
    qrels = _check_qrels(rows, rsource, set(qseen), set(seen))
    return _assemble("npl", documents, raw_queries, qrels, notes,
                     "documents: text after <DOCNO>; queries: <title>")


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
