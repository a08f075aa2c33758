"""Glasgow/SMART ``.I/.T/.A/.B/.W`` files (Cranfield, CISI, MEDLINE, ADI)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from gabarito.errors import GabaritoError
from gabarito.inputs.collections.files import _lines
from gabarito.inputs.documents import Document
from gabarito.notes import note

_MARKER = re.compile(r"^\.([A-Za-z])(?:[ \t]+(.*?))?[ \t]*$")
_MARKER_START = re.compile(r"^\.[A-Za-z](?:[ \t]|$)")


@dataclass
class GlasgowRecord:
    """One ``.I`` record: its id as written, its line, and its sections (marker -> text)."""

    id: str
    line: int
    fields: dict[str, str]
    field_lines: dict[str, int]


def parse_glasgow(text: str, source: str, fields: Iterable[str], *,
                  notes: list[dict] | None = None) -> list[GlasgowRecord]:
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
    return _GlasgowParser(source, fields, notes).parse(text)


class _GlasgowParser:
    """The state of :func:`parse_glasgow` while it walks the lines of one file."""

    def __init__(self, source: str, fields: Iterable[str], notes: list[dict] | None):
        self.source = source
        self.allowed = {f.upper() for f in fields}
        self.label = str(source).replace("\\", "/").rsplit("/", 1)[-1]  # notes name the file, not the cache path
        self.notes = notes
        self.records: list[GlasgowRecord] = []
        self.seen: dict[str, int] = {}
        self.current: GlasgowRecord | None = None
        self.chunks: dict[str, list[list[str]]] = {}
        self.section: list[str] | None = None
        self.section_name = ""

    def parse(self, text: str) -> list[GlasgowRecord]:
        for lineno, line in enumerate(_lines(text), start=1):
            if _MARKER_START.match(line):
                self._marker(line, lineno)
            else:
                self._body(line, lineno)
        self._close()
        if not self.records:
            raise GabaritoError("no .I records", path=self.source)
        return self.records

    def _note(self, value: dict) -> None:
        if self.notes is not None:
            self.notes.append(value)

    def _close(self) -> None:
        """Join the current record's sections into its ``fields`` (exact repeats dropped)."""
        current = self.current
        if current is None:
            return
        for name, parts in self.chunks.items():
            texts: list[str] = []
            for part in parts:
                body = "\n".join(part).strip()
                if body and " ".join(body.split()) in {" ".join(t.split()) for t in texts}:
                    self._note(note("collection.field_repeated", source=self.label, record=current.id,
                                    field=f".{name}"))
                    continue
                texts.append(body)
            current.fields[name] = "\n".join(t for t in texts if t)

    def _marker(self, line: str, lineno: int) -> None:
        m = _MARKER.match(line)
        marker = m.group(1) if m else line[1]
        rest = (m.group(2) or "") if m else ""
        if marker.upper() != marker:
            raise GabaritoError(f"unknown field marker '.{marker}'", path=self.source, record=f"line {lineno}")
        if marker == "I":
            self._start_record(rest, lineno)
        else:
            self._start_section(marker, rest, lineno)

    def _start_record(self, rest: str, lineno: int) -> None:
        if not re.fullmatch(r"\d+", rest):
            what = f"'{rest}'" if rest else "nothing"
            raise GabaritoError(f".I must be followed by a record number, found {what}",
                                path=self.source, record=f"line {lineno}")
        rid = str(int(rest))
        if rid in self.seen:
            raise GabaritoError(f"record .I {rest} repeats the one at line {self.seen[rid]}",
                                path=self.source, record=f"line {lineno}")
        self._close()
        self.seen[rid] = lineno
        self.current = GlasgowRecord(rest, lineno, {}, {})
        self.records.append(self.current)
        self.chunks = {}
        self.section, self.section_name = None, ""

    def _start_section(self, marker: str, rest: str, lineno: int) -> None:
        if marker not in self.allowed:
            known = ", ".join("." + f for f in ["I", *sorted(self.allowed)])
            raise GabaritoError(f"unknown field marker '.{marker}' (expected one of {known})",
                                path=self.source, record=f"line {lineno}")
        if rest:
            raise GabaritoError(f"field marker '.{marker}' followed by text {rest[:40]!r}",
                                path=self.source, record=f"line {lineno}")
        current = self.current
        if current is None:
            raise GabaritoError(f"field '.{marker}' before the first .I record", path=self.source,
                                record=f"line {lineno}")
        if marker in self.chunks and marker in "TAB" and self.section_name == "W":
            self._note(note("collection.field_inside_abstract", source=self.label, line=lineno,
                            record=current.id, field=f".{marker}"))
            return
        if marker == "W" and marker in self.chunks:
            self._note(note("collection.second_section", source=self.label, line=lineno, record=current.id,
                            field=".W"))
        self.section = []
        self.chunks.setdefault(marker, []).append(self.section)
        current.field_lines.setdefault(marker, lineno)
        self.section_name = marker

    def _body(self, line: str, lineno: int) -> None:
        if self.current is None:
            if line.strip():
                raise GabaritoError("text before the first .I record", path=self.source, record=f"line {lineno}")
            return
        if self.section is None:
            if line.strip():
                raise GabaritoError(f"text after .I {self.current.id} before any field marker",
                                    path=self.source, record=f"line {lineno}")
            return
        self.section.append(line.rstrip())


def _text(record: GlasgowRecord, *names: str) -> str:
    return "\n\n".join(record.fields[n] for n in names if record.fields.get(n))


def _glasgow_documents(text: str, source: str, fields: str, notes: list[dict]) -> list[Document]:
    docs = []
    for rec in parse_glasgow(text, source, fields, notes=notes):
        title = " ".join(rec.fields.get("T", "").split())
        docs.append(Document(str(int(rec.id)), _text(rec, "T", "W"), title))
    return docs


def _glasgow_queries(text: str, source: str, fields: str, notes: list[dict]) -> list[GlasgowRecord]:
    records = parse_glasgow(text, source, fields, notes=notes)
    for rec in records:
        if not rec.fields.get("W", "").strip():
            raise GabaritoError(f"query .I {rec.id} has no .W text", path=source, record=f"line {rec.line}")
    return records
