"""Pointers from a chapter's text to one of its own sections, always written as links.

Every chapter ends its reading with a ``## Detalhes`` section (the tables behind its numbers, in
folds); a sentence that sends the reader there ("a tabela completa está em Detalhes") links to it
through :func:`details`, so the pointer is one tap on a phone. The book's style check
(:mod:`gabarito.publish.style`, rule ``pointer``) refuses a pointer to "Detalhes" left as plain text.
"""

from __future__ import annotations

import re
import unicodedata

#: The title of the section each chapter keeps its tables in.
DETAILS = "Detalhes"


def section_id(title: str) -> str:
    """The id the renderers give a ``##`` heading (pandoc's rule): lower case, blanks to hyphens,
    punctuation other than ``_-.`` dropped, accents kept: ``'Detalhes' -> 'detalhes'``."""
    words = unicodedata.normalize("NFC", title).strip().lower()
    words = re.sub(r"[^\w\s.-]", "", words)
    return re.sub(r"\s+", "-", words)


def to_section(title: str, words: str | None = None, *, html: bool = False) -> str:
    """A link to the page's section ``title``, in Markdown (``[Detalhes](#detalhes)``) or, with
    ``html``, as an ``<a>`` for text shown as HTML; ``words`` are the link's words (default the
    title)."""
    words = title if words is None else words
    if html:
        from gabarito.publish.formatting import text

        return f'<a href="#{text(section_id(title))}">{text(words)}</a>'
    return f"[{words}](#{section_id(title)})"


def details(words: str = DETAILS, *, html: bool = False) -> str:
    """The pointer to the chapter's "Detalhes" section: ``'[Detalhes](#detalhes)'``."""
    return to_section(DETAILS, words, html=html)
