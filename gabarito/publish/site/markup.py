"""Reading the rendered pages: markup that escaped from the data, elements by id, the text by section.

:func:`check_markup` is the guard for escaping: a page whose body holds an element that is not
HTML (``<docno>``), or a ``<title>`` outside the head, printed data without escaping it; a
browser would open that element and swallow the rest of the page. The build refuses it.
"""

from __future__ import annotations

import html.parser
import re
from pathlib import Path

from gabarito.errors import GabaritoError

HTML_ELEMENTS = frozenset("""
a abbr address area article aside audio b base bdi bdo blockquote body br button canvas caption cite code col
colgroup data datalist dd del details dfn dialog div dl dt em embed fieldset figcaption figure footer form h1 h2
h3 h4 h5 h6 head header hgroup hr html i iframe img input ins kbd label legend li link main map mark menu meta
meter nav noscript object ol optgroup option output p picture pre progress q rp rt ruby s samp script search
section select slot small source span strong style sub summary sup table tbody td template textarea tfoot th
thead time title tr track u ul var video wbr
""".split())
SVG_ELEMENTS = frozenset("""
svg g path rect circle ellipse line polyline polygon text tspan textpath defs marker clippath lineargradient
radialgradient stop use symbol title desc image pattern mask filter foreignobject style metadata switch
""".split()) | frozenset(f"fe{x}" for x in (
    "blend", "colormatrix", "componenttransfer", "composite", "convolvematrix", "diffuselighting",
    "displacementmap", "flood", "gaussianblur", "image", "merge", "mergenode", "morphology", "offset",
    "specularlighting", "tile", "turbulence", "funca", "funcb", "funcg", "funcr", "distantlight", "pointlight",
    "spotlight", "dropshadow"))
MATH_ELEMENTS = frozenset("math mi mn mo ms mtext mrow msup msub msubsup mfrac msqrt mroot mtable mtr mtd "
                          "mspace mstyle semantics annotation munder mover munderover menclose mpadded".split())
_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())


class _Elements(html.parser.HTMLParser):
    """Elements of a page that no browser knows, or that belong in the head, found in the body."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.in_body = False
        self.foreign: list[str] = []  # open <svg>/<math>
        self.bad: list[tuple[int, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "body":
            self.in_body = True
            return
        if self.foreign:
            allowed = SVG_ELEMENTS if self.foreign[-1] == "svg" else MATH_ELEMENTS
            if tag not in allowed and tag not in HTML_ELEMENTS:
                self.bad.append((self.getpos()[0], tag))
            if tag in ("svg", "math"):
                self.foreign.append(tag)
            return
        if tag in ("svg", "math"):
            self.foreign.append(tag)
            return
        if (tag not in HTML_ELEMENTS and "-" not in tag) or (self.in_body and tag in ("title", "head", "html", "body", "base")):
            self.bad.append((self.getpos()[0], tag))

    def handle_endtag(self, tag):
        if self.foreign and tag == self.foreign[-1]:
            self.foreign.pop()


def stray_elements(page_html: str) -> list[tuple[int, str]]:
    """``(line, tag)`` of every element a browser would not render as the page means it."""
    p = _Elements()
    p.feed(page_html)
    return p.bad


def check_markup(site: Path) -> None:
    """Refuse a site whose pages show data as markup (see the module docstring)."""
    for page in sorted(Path(site).rglob("*.html")):
        bad = stray_elements(page.read_text(encoding="utf-8", errors="replace"))
        if bad:
            shown = ", ".join(f"<{t}> at line {ln}" for ln, t in bad[:5])
            raise GabaritoError(f"the page holds markup that is not HTML ({shown}): text from the data was "
                                "printed without escaping; format it with gabarito.publish.formatting.md or "
                                "text", path=page)


# --- finding elements -------------------------------------------------------------------------------

def element_span(page_html: str, start: int) -> tuple[int, int]:
    """``(start, end)`` of the element whose start tag begins at ``start`` (nesting counted)."""
    m = re.match(r"<([a-zA-Z][\w-]*)", page_html[start:])
    if not m:
        raise ValueError("no start tag at this position")
    tag = m.group(1).lower()
    if tag in _VOID:
        return start, page_html.index(">", start) + 1
    depth = 0
    for t in re.finditer(rf"<(/?){tag}\b[^>]*>", page_html[start:], re.I):
        depth += -1 if t.group(1) else 1
        if depth == 0:
            return start, start + t.end()
    raise ValueError(f"<{tag}> is never closed")


def find_by_id(page_html: str, element_id: str) -> tuple[int, int] | None:
    """The span of the element with ``id="element_id"``, or ``None``."""
    m = re.search(rf"""<[a-zA-Z][\w-]*\b[^>]*\bid=["']{re.escape(element_id)}["'][^>]*>""", page_html)
    return element_span(page_html, m.start()) if m else None


# --- the text of a page, section by section (for the search index) ----------------------------------

class _Sections(html.parser.HTMLParser):
    """The text of ``<main>`` cut at each ``h2``/``h3`` with an id, whole: folded blocks and code blocks
    (an install command) included; scripts, styles, charts, buttons, navigation, the folded copy of
    the table of contents and the labels of code toggles left out."""

    SKIP = ("script", "style", "svg", "button", "nav")

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.in_main = 0
        self.skipping: list[str] = []  # the open elements whose text is left out
        self.heading: str | None = None
        self.details: list[bool] = []  # open <details>: whether each is a code toggle
        self.pre = 0  # inside <pre>: the highlighter's spans cut words, so pieces join without a space
        self.joined = False  # the last piece of text came from a <pre>
        self.sections: list[dict] = [{"id": "", "title": "", "text": []}]

    def _skipped(self, tag: str, cls: str) -> bool:
        if tag in self.SKIP or (tag == "details" and "gabarito-toc-mobile" in cls):
            return True
        return tag == "summary" and bool(self.details) and self.details[-1]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "main":
            self.in_main += 1
        if not self.in_main:
            return
        cls = a.get("class") or ""
        if tag == "details":
            self.details.append("code-fold" in cls)
        self.pre += tag == "pre"
        self.joined = self.joined and tag != "pre"
        if self._skipped(tag, cls):
            self.skipping.append(tag)
        elif tag in ("h2", "h3") and not self.skipping:
            anchor = a.get("id") or a.get("data-anchor-id") or ""
            self.sections.append({"id": anchor, "title": "", "text": []})
            self.heading = tag

    def handle_endtag(self, tag):
        if tag == "main":
            self.in_main -= 1
        if not self.in_main:
            return
        if self.skipping and tag == self.skipping[-1]:
            self.skipping.pop()
        if tag == "pre" and self.pre:
            self.pre -= 1
            self.joined = False
        if tag == "details" and self.details:
            self.details.pop()
        elif tag == self.heading:
            self.heading = None

    def handle_data(self, data):
        if not self.in_main or self.skipping:
            return
        sec = self.sections[-1]
        if self.heading:
            sec["title"] += data
        elif self.pre and self.joined:
            sec["text"][-1] += data
        else:
            sec["text"].append(data)
            self.joined = bool(self.pre)


def page_sections(page_html: str) -> list[dict]:
    """``[{"id", "title", "text"}]`` of a page's main content; the first is the text before any heading."""
    p = _Sections()
    p.feed(page_html)
    out = []
    for s in p.sections:
        body = " ".join(" ".join(s["text"]).split())
        title = " ".join(s["title"].split())
        if body or title:
            out.append({"id": s["id"], "title": title, "text": body})
    return out
