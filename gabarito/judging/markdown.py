"""The little Markdown a grading guide uses, as HTML: headings, paragraphs, lists, code, bold.

Enough for ``guia_de_avaliacao.md`` and a user's own guide in the same style; everything is
escaped first, so a guide cannot inject markup into the judging page.
"""

from __future__ import annotations

import html
import re

_INLINE = ((re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
           (re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
           (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"<em>\1</em>"))
_BLOCK = re.compile(r"^(#{1,4}) +(.*)$|^\s*([-*]|\d+\.) +(.*)$")


def _inline(text: str) -> str:
    out = html.escape(text, quote=False)
    for pattern, repl in _INLINE:
        out = pattern.sub(repl, out)
    return out


def to_html(text: str) -> str:
    """HTML of ``text``: ``#``..``####`` headings (shifted down one level), ``-``/``*`` and ``1.``
    lists, four-space code blocks, paragraphs; inline code, bold and italics."""
    out: list[str] = []
    para: list[str] = []
    lst: tuple[str, list[str]] | None = None
    code: list[str] = []

    def flush() -> None:
        nonlocal lst
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
