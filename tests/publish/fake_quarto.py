"""A stand-in ``quarto`` for the tests of ``gabarito site --renderer quarto`` where real Quarto is not installed.

``install(bindir, handed)`` writes an executable ``bindir/quarto`` that, called as ``quarto render STAGE
--no-execute``:

1. copies what gabarito hands to Quarto (the staged project: ``_quarto.yml``, the pages, the executed
   notebooks) into ``handed``, so a test can read the markup Quarto would receive;
2. renders the staged project with smalldocs (Quarto's layout and markup, as smalldocs mirrors them);
3. does to each page what Quarto 1.10 does and smalldocs does not, as Quarto's source does it:
   - ``src/core/jupyter/widgets.ts`` (``includesForJupyterWidgetDependencies``): a page whose notebook has
     a ``text/html`` output gets require.js and jQuery from a CDN and the inline shim
     ``define('jquery', [],function() {return window.jQuery;})`` in its head;
   - ``src/format/html/format-html-bootstrap.ts``: every ``<aside>`` is a column element
     (``getColumnLayoutElements``); one inside a callout's body is taken out of the callout and put
     after it (``processMarginElsInCallouts``), and Quarto's grid places it in the right margin, outside
     the text column. Here the aside goes after its callout, into a ``div.column-margin`` styled as that
     margin (right of the text, 215 px wide);
   - Quarto reads an HTML table of an output into pandoc's own (quarto.org, "HTML Table Processing",
     1.3 and later), and pandoc writes a cell's alignment as ``style="text-align: right;"``, with a space
     and a semicolon: the cells here are respelled so.

Each call appends a JSON line to ``handed/../quarto-log.jsonl``: the arguments, how many pages got the
widget scripts, how many asides were moved and how many table cells respelled.
"""

from __future__ import annotations

import sys
from pathlib import Path

SCRIPT = r'''
import json, re, shutil, sys
from pathlib import Path

from gabarito.publish.site.markup import element_span

WIDGET_HEAD = (
    '<script src="https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js" integrity="sha512-x" '
    'crossorigin="anonymous"></script>\n'
    '<script src="https://cdnjs.cloudflare.com/ajax/libs/jquery/3.5.1/jquery.min.js" integrity="sha512-y" '
    'crossorigin="anonymous" data-relocate-top="true"></script>\n'
    '<script type="application/javascript" data-relocate-top="true">define(\'jquery\', [],function() '
    '{return window.jQuery;})</script>\n')
MARGIN = '<div class="column-margin" style="position:absolute;left:calc(100% + 1.5rem);width:215px">'
CALLOUT = re.compile(r'<div\b[^>]*\bclass="callout[ "]')
CELL_STYLE = re.compile(r'<(t[dh])\b([^>]*?)\sstyle="text-align:\s*(\w+)[^"]*"')


def has_html_output(nb_path):
    try:
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return any("text/html" in (o.get("data") or {}) for c in nb.get("cells", []) if c.get("cell_type") == "code"
               for o in c.get("outputs") or [])


def move_asides(text):
    moved = 0
    while True:
        m = re.search(r"<aside\b(?![^>]*data-quarto-margin)", text)
        if not m:
            return text, moved
        s, e = element_span(text, m.start())
        element = text[s:e].replace("<aside", '<aside data-quarto-margin="1"', 1)
        text = text[:s] + text[e:]
        at = s
        for c in CALLOUT.finditer(text, 0, s):
            cs, ce = element_span(text, c.start())
            if cs < s < ce:  # the outermost callout around it
                at = ce
                break
        text = text[:at] + MARGIN + element + "</div>" + text[at:]
        moved += 1


args = sys.argv[1:]
stage = Path(args[1])
handed = Path(HANDED)
if handed.exists():
    shutil.rmtree(handed)
shutil.copytree(stage, handed, ignore=shutil.ignore_patterns(".packaged", "downloads", "_site"))
from smalldocs.site import build
site = Path(build(stage, quiet=True).out)
widgets = moved = cells = 0
for page in sorted(site.rglob("*.html")):
    if "site_libs" in page.parts:
        continue
    rel = page.relative_to(site)
    text = page.read_text(encoding="utf-8")
    if has_html_output(stage / rel.with_suffix(".ipynb")):
        i = text.lower().find("</head>")
        text = text[:i] + WIDGET_HEAD + text[i:]
        widgets += 1
    text, n = move_asides(text)
    moved += n
    text, n = CELL_STYLE.subn(r'<\1\2 style="text-align: \3;"', text)
    cells += n
    page.write_text(text, encoding="utf-8")
with open(handed.parent / "quarto-log.jsonl", "a", encoding="utf-8") as log:
    log.write(json.dumps({"args": args, "widget_pages": widgets, "asides_moved": moved, "cells_respelled": cells}) + "\n")
'''


def install(bindir: Path, handed: Path) -> Path:
    """Write the stand-in ``quarto`` into ``bindir``; what it is handed goes to ``handed``."""
    bindir.mkdir(parents=True, exist_ok=True)
    fake = bindir / "quarto"
    fake.write_text(f"#!{sys.executable}\nHANDED = {str(handed)!r}\n{SCRIPT}", encoding="utf-8")
    fake.chmod(0o755)
    return fake
