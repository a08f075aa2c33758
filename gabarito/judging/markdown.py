"""The little Markdown a grading guide or a candidate document uses, as HTML: headings,
paragraphs, lists, pipe tables, code, bold.

Enough for ``guia_de_avaliacao.md``, a user's own guide in the same style and the Markdown
documents the judging page shows; everything is escaped first, so neither a guide nor a document
can inject markup into the page. Plain text comes out as paragraphs.
"""

from __future__ import annotations

import html
import re

_INLINE = ((re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
           (re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
           (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"<em>\1</em>"))
_BLOCK = re.compile(r"^(#{1,4}) +(.*)$|^\s*([-*]|\d+\.) +(.*)$")
_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(rows: list[str]) -> str:
    """A pipe table: the first row is the header when a ``|---|`` rule follows it."""
    head = _cells(rows[0]) if len(rows) > 1 and _RULE.match(rows[1]) else None
    body = rows[2:] if head else rows
    out = ["<table>"]
    if head:
        out.append("<thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr></thead>")
    out.append("<tbody>" + "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in _cells(r)) + "</tr>"
                                   for r in body if not _RULE.match(r)) + "</tbody></table>")
    return "".join(out)


def _inline(text: str) -> str:
    out = html.escape(text, quote=False)
    for pattern, repl in _INLINE:
        out = pattern.sub(repl, out)
    return out


def to_html(text: str) -> str:
    """HTML of ``text``: ``#``..``####`` headings (shifted down one level), ``-``/``*`` and ``1.``
    lists, pipe tables, four-space code blocks, paragraphs; inline code, bold and italics."""
    out: list[str] = []
    para: list[str] = []
    lst: tuple[str, list[str]] | None = None
    code: list[str] = []
    table: list[str] = []

    def flush() -> None:
        nonlocal lst
        if table:
            out.append(_table(table))
            table.clear()
        if para:
            out.append(f"<p>{_inline(' '.join(para))}</p>")
            para.clear()
        if lst:
            out.append(f"<{lst[0]}>" + "".join(f"<li>{_inline(i)}</li>" for i in lst[1]) + f"</{lst[0]}>")
            lst = None
        if code:
            out.append("<pre><code>" + html.escape("\n".join(code), quote=False) + "</code></pre>")
            code.clear()

    for line in text.splitlines():
        if line.startswith("    ") and not lst and not para and line.strip():
            code.append(line[4:])
            continue
        if code and line.strip():
            flush()
        if line.lstrip().startswith("|") and not lst:
            if para:
                flush()
            table.append(line)
            continue
        if table:
            flush()
        m = _BLOCK.match(line)
        if not line.strip():
            if not code:
                flush()
        elif m and m.group(1):
            flush()
            level = min(len(m.group(1)) + 1, 5)
            out.append(f"<h{level}>{_inline(m.group(2))}</h{level}>")
        elif m:
            tag = "ol" if m.group(3)[0].isdigit() else "ul"
            if para or (lst and lst[0] != tag):
                flush()
            lst = lst or (tag, [])
            lst[1].append(m.group(4))
        elif lst:
            lst[1][-1] += " " + line.strip()
        else:
            para.append(line.strip())
    flush()
    return "\n".join(out)
