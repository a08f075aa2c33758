"""Raw material from the data, shown to a reader as text and never as markup.

Some files a page quotes are Markdown: the instructions given to the question writers, the help
center's documents. Escaped as they are (:func:`gabarito.publish.formatting.md`), they reach the
reader as one paragraph of ``#``, ``**`` and ``|``. Here:

- :func:`markdown_html` renders the few Markdown blocks such a file uses (headings, paragraphs,
  lists, quotes, inline code, bold and italic) as HTML in which every piece of the file's text is
  escaped, so the text stays the file's text and nothing in it opens an element;
- :func:`protocol_html` is that rendering labelled as what it is: a protocol given to the writers,
  in English, after a Portuguese lead-in;
- :func:`plain` strips the markup of a Markdown excerpt (table bars, emphasis marks, heading
  hashes, backticks), for an example quoted inside a sentence or a list.
"""

from __future__ import annotations

import html
import re

from gabarito.inputs.markdown import BULLET, HEADING, NUMBERED, QUOTE, RULE, TABLE_ROW, TABLE_RULE
from gabarito.publish.formatting import Html

_ITALIC = r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])|(?<!\w)_(\S(?:.*?\S)?)_(?!\w)"


def _heading(line: str) -> re.Match | None:
    """A heading with words (a lone ``#`` is text)."""
    m = HEADING.match(line)
    return m if m and m["text"] is not None else None


def _inline(value: str) -> str:
    """One line's text, escaped, with inline code, bold and italic as elements."""
    out, last = [], 0
    for m in re.finditer(r"`([^`]+)`", value):
        out.append(_emphasis(html.escape(value[last:m.start()], quote=False)))
        out.append(f"<code>{html.escape(m.group(1), quote=False)}</code>")
        last = m.end()
    out.append(_emphasis(html.escape(value[last:], quote=False)))
    return "".join(out)


def _emphasis(escaped: str) -> str:
    escaped = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*|__(\S(?:.*?\S)?)__", lambda m: f"<strong>{m[1] or m[2]}</strong>", escaped)
    return re.sub(_ITALIC, lambda m: f"<em>{m[1] or m[2]}</em>", escaped)


def markdown_html(value: str) -> Html:
    """The Markdown text ``value`` as escaped HTML: ``#`` headings become bold paragraphs (class
    ``gabarito-quoted-h1``...: a quoted file never adds entries to the page's contents), ``-``/``1.``
    items lists, ``>`` a quote, a table one line per row, blank lines paragraphs."""
    blocks: list[str] = []
    para: list[str] = []
    items: list[str] = []
    kind = ""

    def flush() -> None:
        nonlocal kind
        if para:
            blocks.append("<p>" + " ".join(_inline(x) for x in para) + "</p>")
            para.clear()
        if items:
            blocks.append(f"<{kind}>" + "".join(f"<li>{_inline(x)}</li>" for x in items) + f"</{kind}>")
            items.clear()
        kind = ""

    for line in str(value).splitlines():
        if not line.strip() or RULE.match(line) or TABLE_RULE.match(line):
            flush()
            continue
        m = _heading(line)
        if m:  # a heading of the quoted file: bold, never an <h*> the page's contents would list
            flush()
            level = len(m["marks"])
            blocks.append(f'<p class="gabarito-quoted-h{level}"><strong>{_inline(m["text"])}</strong></p>')
            continue
        for pattern, tag in ((BULLET, "ul"), (NUMBERED, "ol")):
            m = pattern.match(line)
            if m:
                if para or (kind and kind != tag):
                    flush()
                kind = tag
                items.append(m["text"])
                break
        else:
            m = QUOTE.match(line)
            if m:
                flush()
                blocks.append(f"<blockquote><p>{_inline(m['text'])}</p></blockquote>")
            elif TABLE_ROW.match(line):
                flush()
                blocks.append(f"<p>{_inline(_row(line))}</p>")
            elif items and line.startswith((" ", "\t")):
                items[-1] += " " + line.strip()  # an item's continuation line
            else:
                if items:
                    flush()
                para.append(line.strip())
    flush()
    return Html("".join(blocks))


def protocol_html(instructions: str, lead: str = "Protocolo dado a quem escreveu as perguntas "
                                                   "(texto original, em inglês):") -> Html:
    """The instructions given to the question writers, rendered (:func:`markdown_html`), marked
    ``lang="en"`` and introduced by a Portuguese ``lead``."""
    return Html(f'<div class="gabarito-protocol"><p>{html.escape(lead, quote=False)}</p>'
                f'<div lang="en">{markdown_html(instructions)}</div></div>')


def _row(line: str) -> str:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return " · ".join(c for c in cells if c)


def plain(value: str) -> str:
    """A Markdown excerpt as plain text, for quoting: ``'## Endereço errado'`` -> ``'Endereço
    errado'``, ``'**Esqueci minha senha**'`` -> ``'Esqueci minha senha'``, ``'| | `ERR-PIX-002` |'``
    -> ``'ERR-PIX-002'``; lines joined by a space. Escape the result where it goes
    (:func:`~gabarito.publish.formatting.md`, :func:`~gabarito.publish.formatting.text`)."""
    lines = []
    for line in str(value).splitlines():
        if RULE.match(line) or TABLE_RULE.match(line):
            continue
        m = _heading(line)
        line = m["text"] if m else line
        line = QUOTE.sub(r"\g<text>", line)
        line = BULLET.sub(r"\g<text>", line)
        if TABLE_ROW.match(line):
            line = _row(line)
        line = re.sub(r"`([^`]*)`", r"\1", line)
        line = re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: m[1] or m[2], line)
        line = re.sub(_ITALIC, lambda m: m[1] or m[2], line)
        line = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", line)  # a link: its words
        if line.strip():
            lines.append(line.strip())
    return re.sub(r"\s+", " ", " ".join(lines)).strip()
