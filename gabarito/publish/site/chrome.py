"""The page's frame, put right after rendering, the same under smalldocs and Quarto.

- :func:`place_search_box`: the search box lives inside the navbar's collapsible part, after the
  entries. Quarto writes its search ``<div>`` between the title and the menu button; a text box
  there squeezes the title ("gaba…") and wraps the menu, and below the collapse width it stays out
  of the menu. Moved into the menu, it sits at the right of the entries on a wide screen and folds
  into the menu on a narrow one.
- :func:`unlist_quoted_headings`: the headings of a document quoted in the page (a ``<blockquote>``,
  such as the assessment guide the judgments chapter shows whole) are not entries of the page's
  table of contents: they belong to the quoted document, not to the chapter.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from gabarito.publish.site.markup import element_span, find_by_id

_SEARCH = re.compile(r"""<div\b[^>]*\bclass=["'](?:[^"']*\s)?gabarito-search["'\s]""")
_COLLAPSE = re.compile(r"""<div\b[^>]*\bclass=["'][^"']*\bnavbar-collapse\b[^"']*["'][^>]*>""")
_HEADING_ID = re.compile(r"""<h[1-6]\b[^>]*\bid=["']([^"']+)["']""", re.I)


def place_search_box(text: str) -> str:
    """Move the site's search box into the navbar's collapsible part (see the module docstring).
    A page without a search box or without a collapsible navbar is returned as it is."""
    box = _SEARCH.search(text)
    collapse = _COLLAPSE.search(text)
    if not box or not collapse:
        return text
    c_start, c_end = element_span(text, collapse.start())
    if c_start < box.start() < c_end:
        return text
    b_start, b_end = element_span(text, box.start())
    moved = f'<div class="quarto-navbar-tools gabarito-navbar-tools">{text[b_start:b_end]}</div>'
    close = c_end - len("</div>")
    if b_start >= c_end:  # the box after the menu: cut it first so the menu's offsets hold
        text = text[:b_start] + text[b_end:]
        return text[:close] + moved + text[close:]
    text = text[:close] + moved + text[close:]
    return text[:b_start] + text[b_end:]


def quoted_heading_ids(text: str) -> set[str]:
    """Ids of the headings inside a ``<blockquote>`` of the page."""
    ids: set[str] = set()
    for m in re.finditer(r"<blockquote\b", text, re.I):
        start, end = element_span(text, m.start())
        ids.update(_HEADING_ID.findall(text[start:end]))
    return ids


def unlist_quoted_headings(text: str) -> str:
    """Remove from the table of contents (``#TOC``) the entries of headings quoted in the page. An
    entry's own list moves up in its place: a quoted ``<h1>`` holds, in the renderer's nesting,
    the chapter's sections that follow it, and those stay. A list left empty goes too."""
    ids = quoted_heading_ids(text)
    span = find_by_id(text, "TOC") if ids else None
    if span is None:
        return text
    toc = text[span[0]:span[1]]
    target = "|".join(re.escape(x) for i in sorted(ids) for x in {i, quote(i, safe="")})
    entry = re.compile(rf"""<li\b[^>]*>\s*<a\b[^>]*\bhref=["']#(?:{target})["']""")
    while (link := entry.search(toc)) is not None:
        s, e = element_span(toc, link.start())
        item, kids = toc[s:e], ""
        inner = re.search(r"<ul\b", item)
        if inner:
            us, ue = element_span(item, inner.start())
            kids = re.sub(r"^<ul\b[^>]*>|</ul>$", "", item[us:ue])
        toc = toc[:s] + kids + toc[e:]
    toc = re.sub(r"<ul\b[^>]*>\s*</ul>", "", toc)
    return text[:span[0]] + toc + text[span[1]:]
