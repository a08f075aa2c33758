"""Segmentation: turning documents into the units (chunks) that get searched.

A :class:`Chunk` is a contiguous span ``[start, end)`` of its document's text
(trimmed of surrounding whitespace), so ``doc.text[chunk.start:chunk.end]`` is
the chunk *body* and the chunk that holds an answer phrase can be found
(:func:`chunk_containing`). ``chunk.text`` is the body, preceded, when
``prefix_title`` is on, by ``"<Title> > <Section>: "`` (empty parts are left
out: ``"<Title>: "`` outside any ``##`` section, nothing when both are empty).
The prefix is applied the same way in every mode. Chunk ids are
``<doc id>#0000``, ``<doc id>#0001``, ... in document order.

Specs (:func:`segment`):

``document``
    one chunk per document.
``paragraph``
    blocks separated by blank lines. A fenced code block, a Markdown table and a
    list (even a loose one, with blank lines between items) stay whole; a
    heading line starts a new block, and a block made only of headings is joined
    to the block that follows it (within its ``##`` section).
``section``
    one chunk per ``##`` section (from its heading line to the next ``##``).
    The text before the first ``##`` is its own chunk, whose section is ``""``;
    when that text holds nothing but headings (typically the ``# Title`` line)
    it is joined to the first section instead.
``recursive:N`` / ``recursive:N:O``
    chunks of at most ``N`` tokens, where a **token is a whitespace-separated
    word** (``len(body.split())``), the next chunk repeating the last ``O``
    tokens (default 0, ``O < N``) of the previous one. Each section is split on
    its own (a chunk never crosses a ``##`` boundary and overlap does not carry
    across one): a piece longer than ``N - O`` tokens is split into paragraphs
    (as in ``paragraph``), then sentences (``.``, ``!`` or ``?`` before a blank,
    or a line break), then words; the pieces are then packed greedily in order
    up to ``N`` tokens. The prefix does not count towards ``N``.

Headings inside fenced code blocks are ignored everywhere. :data:`SEGMENTER_VERSION`
is recorded in run logs (:func:`describe`) and is bumped whenever the output of
any spec changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.inputs.markdown import FENCE, HEADING, TABLE_ROW, list_item, section_name

__all__ = [
    "SEGMENTER_VERSION",
    "VALID_SPECS",
    "Chunk",
    "segment",
    "parse_spec",
    "describe",
    "chunk_containing",
    "collapse_to_documents",
]

#: Recorded in run logs; bump when the chunks produced for any spec change.
SEGMENTER_VERSION = "1"

VALID_SPECS = ("document", "paragraph", "section", "recursive:N", "recursive:N:O")


@dataclass(frozen=True)
class Chunk:
    """A searchable unit: ``text`` is what is indexed; ``start``/``end`` locate its body in the document."""

    id: str
    doc_id: str
    text: str
    title: str
    section: str
    start: int
    end: int


# --- spec ------------------------------------------------------------------------------------

_RECURSIVE = re.compile(r"^recursive:(?P<n>\d+)(?::(?P<o>\d+))?$")


def parse_spec(spec: str) -> tuple[str, int, int]:
    """``(mode, N, O)`` for a spec (``N`` and ``O`` are 0 outside ``recursive``)."""
    text = spec.strip().lower() if isinstance(spec, str) else ""
    if text in ("document", "paragraph", "section"):
        return text, 0, 0
    m = _RECURSIVE.match(text)
    valid = ", ".join(VALID_SPECS)
    if not m:
        raise GabaritoError(f"unknown segmentation spec {spec!r}; valid: {valid}")
    n, o = int(m.group("n")), int(m.group("o") or 0)
    if n < 1:
        raise GabaritoError(f"segmentation spec {spec!r}: N must be at least 1; valid: {valid}")
    if o >= n:
        raise GabaritoError(f"segmentation spec {spec!r}: overlap O must be smaller than N; valid: {valid}")
    return "recursive", n, o


def _canonical_spec(spec: str) -> str:
    mode, n, o = parse_spec(spec)
    return f"recursive:{n}:{o}" if mode == "recursive" else mode


def describe(spec: str, *, prefix_title: bool = True) -> dict:
    """What a run log records about segmentation (the spec in canonical form)."""
    return {"spec": _canonical_spec(spec), "version": SEGMENTER_VERSION, "prefix_title": bool(prefix_title)}


# --- Markdown structure ----------------------------------------------------------------------

# the line patterns are gabarito.inputs.markdown's (FENCE, HEADING, list_item, TABLE_ROW, section_name)
_TOKEN = re.compile(r"\S+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[ \t]+|[ \t]*\n\s*")

Span = tuple[int, int]


def _lines(text: str, start: int, end: int) -> list[Span]:
    """``(start, end)`` of each line of ``text[start:end]``, newline excluded."""
    out = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        if nl == -1:
            out.append((pos, end))
            break
        out.append((pos, nl))
        pos = nl + 1
    return out


def _trim(text: str, start: int, end: int) -> Span:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _tokens(text: str, start: int, end: int) -> int:
    return sum(1 for _ in _TOKEN.finditer(text, start, end))


def _is_heading_only(text: str, start: int, end: int) -> bool:
    lines = [text[a:b] for a, b in _lines(text, start, end) if text[a:b].strip()]
    return bool(lines) and all(HEADING.match(line) for line in lines)


def _sections(text: str) -> list[tuple[str, int, int]]:
    """``(section name, start, end)`` for the intro and each ``##`` section, trimmed, empty ones dropped."""
    cuts: list[tuple[int, str | None]] = [(0, None)]  # None: the intro, before the first ##
    in_fence = False
    for a, b in _lines(text, 0, len(text)):
        line = text[a:b]
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            name = section_name(line)
            if name is not None:
                cuts.append((a, name.strip()))
    found: list[tuple[str | None, int, int]] = []
    for i, (a, name) in enumerate(cuts):
        b = cuts[i + 1][0] if i + 1 < len(cuts) else len(text)
        s, e = _trim(text, a, b)
        if s < e:
            found.append((name, s, e))
    if len(found) > 1 and found[0][0] is None and _is_heading_only(text, found[0][1], found[0][2]):
        name, _, end = found[1]
        found[:2] = [(name, found[0][1], end)]
    return [(name or "", s, e) for name, s, e in found]


def _blocks(text: str, start: int, end: int) -> list[Span]:
    """Paragraph blocks of ``text[start:end]`` (see the module docstring for the rules)."""
    raw: list[list[int]] = []  # [start, end] of each block before merging
    cur: list[int] | None = None
    in_fence = False
    for a, b in _lines(text, start, end):
        line = text[a:b]
        if in_fence:
            cur[1] = b  # type: ignore[index]
            if FENCE.match(line):
                in_fence = False
            continue
        if FENCE.match(line):
            in_fence = True
            if cur is None:
                cur = [a, b]
            else:
                cur[1] = b
            continue
        if not line.strip():
            if cur is not None:
                raw.append(cur)
                cur = None
            continue
        if HEADING.match(line) and cur is not None and not _is_heading_only(text, cur[0], cur[1]):
            raw.append(cur)
            cur = None
        if cur is None:
            cur = [a, b]
        else:
            cur[1] = b
    if cur is not None:
        raw.append(cur)

    def first_line(block: list[int]) -> str:
        nl = text.find("\n", block[0], block[1])
        return text[block[0]:nl if nl != -1 else block[1]]

    def has(block: list[int], match) -> bool:
        return any(match(text[a:b]) for a, b in _lines(text, block[0], block[1]))

    merged: list[list[int]] = []
    for block in raw:
        if merged:
            prev = merged[-1]
            head = first_line(block)
            continues_list = has(prev, list_item) and (list_item(head) or head[:1] in (" ", "\t"))
            continues_table = has(prev, TABLE_ROW.match) and TABLE_ROW.match(head)
            after_heading = _is_heading_only(text, prev[0], prev[1])
            if continues_list or continues_table or after_heading:
                prev[1] = block[1]
                continue
        merged.append(list(block))
    out = []
    for a, b in merged:
        s, e = _trim(text, a, b)
        if s < e:
            out.append((s, e))
    return out


def _sentences(text: str, start: int, end: int) -> list[Span]:
    out = []
    pos = start
    for m in _SENTENCE_BREAK.finditer(text, start, end):
        out.append(_trim(text, pos, m.start()))
        pos = m.end()
    out.append(_trim(text, pos, end))
    return [(s, e) for s, e in out if s < e]


def _words(text: str, start: int, end: int) -> list[Span]:
    return [m.span() for m in _TOKEN.finditer(text, start, end)]


_SPLITTERS = (_blocks, _sentences, _words)


def _leaves(text: str, start: int, end: int, limit: int, level: int = 0) -> list[Span]:
    """Split ``[start, end)`` until every piece has at most ``limit`` tokens."""
    if _tokens(text, start, end) <= limit:
        return [(start, end)] if start < end else []
    for lvl in range(level, len(_SPLITTERS)):
        parts = _SPLITTERS[lvl](text, start, end)
        if len(parts) > 1:
            break
    out: list[Span] = []
    for s, e in parts:
        out.extend(_leaves(text, s, e, limit, lvl + 1))
    return out


def _pack(text: str, leaves: Sequence[Span], n: int, overlap: int) -> list[Span]:
    """Greedily join consecutive leaves (each at most ``n - overlap`` tokens) into spans of at most ``n``."""
    out: list[Span] = []
    cur: list[int] | None = None
    count = 0
    for a, b in leaves:
        size = _tokens(text, a, b)
        if cur is None:
            cur, count = [a, b], size
        elif count + size <= n:
            cur[1], count = b, count + size
        else:
            out.append((cur[0], cur[1]))
            if overlap:
                words = _words(text, cur[0], cur[1])[-overlap:]
                cur, count = [words[0][0], b], len(words) + size
            else:
                cur, count = [a, b], size
    if cur is not None:
        out.append((cur[0], cur[1]))
    return out


# --- segmentation ----------------------------------------------------------------------------

def _spans(text: str, mode: str, n: int, overlap: int) -> list[tuple[str, int, int]]:
    if mode == "document":
        s, e = _trim(text, 0, len(text))
        return [("", s, e)] if s < e else []
    sections = _sections(text)
    if mode == "section":
        return sections
    out = []
    for name, s, e in sections:
        if mode == "paragraph":
            out.extend((name, a, b) for a, b in _blocks(text, s, e))
        else:
            out.extend((name, a, b) for a, b in _pack(text, _leaves(text, s, e, n - overlap), n, overlap))
    return out


def _prefix(title: str, section: str) -> str:
    parts = [p for p in (title.strip(), section.strip()) if p]
    return " > ".join(parts) + ": " if parts else ""


def segment(documents: Iterable, spec: str, *, prefix_title: bool = True) -> list[Chunk]:
    """Cut ``documents`` (objects with ``id``, ``text`` and ``title``) into chunks, per ``spec``."""
    mode, n, overlap = parse_spec(spec)
    chunks: list[Chunk] = []
    seen: set[str] = set()
    for i, doc in enumerate(documents, start=1):
        if doc.id in seen:
            raise GabaritoError(f"duplicate document id {doc.id!r}", record=f"{i} ({doc.id})")
        seen.add(doc.id)
        title = getattr(doc, "title", "") or ""
        for k, (section, s, e) in enumerate(_spans(doc.text, mode, n, overlap)):
            body = doc.text[s:e]
            text = (_prefix(title, section) + body) if prefix_title else body
            chunks.append(Chunk(f"{doc.id}#{k:04d}", doc.id, text, title, section, s, e))
    return chunks


def chunk_containing(chunks: Iterable[Chunk], doc_id: str, phrase: str, doc_text: str) -> list[str]:
    """Ids of the chunks of ``doc_id`` whose span overlaps the first occurrence of ``phrase`` in ``doc_text``.

    Empty when the phrase is empty or does not occur in the text.
    """
    if not phrase:
        return []
    at = doc_text.find(phrase)
    if at < 0:
        return []
    stop = at + len(phrase)
    return [c.id for c in chunks if c.doc_id == doc_id and c.start < stop and at < c.end]


def collapse_to_documents(ranked_chunk_ids_with_scores: Iterable[tuple[str, float]],
                          chunks_by_id: Mapping[str, Chunk]) -> list[tuple[str, float]]:
    """``(doc id, score)`` for the first (best-ranked) chunk of each document, in ranking order."""
    out: list[tuple[str, float]] = []
    seen: set[str] = set()
    for chunk_id, score in ranked_chunk_ids_with_scores:
        try:
            chunk = chunks_by_id[chunk_id]
        except KeyError:
            raise GabaritoError(f"ranked chunk id {chunk_id!r} is not among the chunks") from None
        doc_id = chunk.doc_id
        if doc_id not in seen:
            seen.add(doc_id)
            out.append((doc_id, score))
    return out
