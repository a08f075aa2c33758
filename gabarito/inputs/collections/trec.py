"""TREC-style SGML files (NPL as distributed by the Terrier team): ``<DOC>`` and ``<top>`` blocks."""

from __future__ import annotations

import bisect
import re

from gabarito.errors import GabaritoError


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
