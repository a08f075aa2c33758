"""What the build adds to every rendered page, the same under smalldocs and Quarto.

- the site's stylesheet and scripts (``site_libs/gabarito/``): figures as blocks that follow their
  column, tables that scroll in their own box with a cue and a sticky first column, the offline
  search (:mod:`.search`: whole sections, accents folded, Portuguese stems);
- a table of contents that folds, at the top of the text, for narrow screens (the margin one is
  hidden there);
- previous and next links, in the navbar's order;
- a search box in Portuguese whose index is a script (``search-index.js``), not a fetched JSON
  file, so it works from ``file://``, inside the navbar's menu (:mod:`.chrome`);
- a table of contents without the headings of documents quoted in the page (:mod:`.chrome`);
- the renderer's own English words (tooltips, labels) in Portuguese;
- the downloads: each study's results, gold, qrels and run files under ``downloads/``.
"""

from __future__ import annotations

import html
import os
import re
import shutil
from pathlib import Path, PurePosixPath

from gabarito.publish.provenance import all_downloads, download_path
from gabarito.publish.site.chrome import place_search_box, unlist_quoted_headings
from gabarito.publish.site.markup import element_span, find_by_id
from gabarito.publish.site.search import SEARCH_INDEX, write_search_index

ASSETS = Path(__file__).parent / "assets"
LIB = PurePosixPath("site_libs/gabarito")
#: The site's own assets, copied into ``LIB``; the scripts load after the search index.
ASSET_FILES = ("gabarito.css", "gabarito.js", "search.js")

#: English words of the renderers' chrome and their Portuguese.
CHROME = {
    'aria-label="Toggle navigation"': 'aria-label="Abrir ou fechar o menu"',
    'title="Copy to Clipboard"': 'title="Copiar"',
    'aria-label="Anchor"': 'aria-label="Âncora"',
    "Back to top": "Voltar ao topo",
    'aria-label="Search"': 'aria-label="Buscar"',
}
SCRIPT_CHROME = {'"Copied!"': '"Copiado!"', '"Copy to Clipboard"': '"Copiar"', '"Anchor"': '"Âncora"'}

SEARCH_BOX = ('<div class="gabarito-search" role="search">'
              '<input type="search" class="form-control form-control-sm" placeholder="Buscar no site" '
              'aria-label="Buscar no site" autocomplete="off">'
              '<div class="gabarito-search-results" hidden></div></div>')


def _pages(site: Path) -> list[Path]:
    return [p for p in sorted(Path(site).rglob("*.html")) if "site_libs" not in p.parts]


def _rel(target: Path, page: Path) -> str:
    return Path(os.path.relpath(target, page.parent)).as_posix()


def install_assets(site: Path) -> None:
    """Copy the stylesheet and the script into the site and load them in every page."""
    dest = Path(site) / LIB
    dest.mkdir(parents=True, exist_ok=True)
    for name in ASSET_FILES:
        shutil.copyfile(ASSETS / name, dest / name)
    for page in _pages(site):
        text = page.read_text(encoding="utf-8")
        css = f'<link rel="stylesheet" href="{_rel(dest / "gabarito.css", page)}">'
        js = f'<script src="{_rel(Path(site) / SEARCH_INDEX, page)}" defer></script>' + "".join(
            f'<script src="{_rel(dest / name, page)}" defer></script>' for name in ASSET_FILES if name.endswith(".js"))
        if css not in text:
            i = text.lower().find("</head>")
            text = text[:i] + css + js + "\n" + text[i:]
        page.write_text(text, encoding="utf-8")


def replace_search_box(text: str) -> str:
    """The renderer's search box (it fetches ``search.json``, which ``file://`` forbids) replaced by ours."""
    span = find_by_id(text, "quarto-search")
    if span is None:
        return text
    return text[:span[0]] + SEARCH_BOX + text[span[1]:]


def mobile_toc(text: str) -> str:
    """A folded copy of the table of contents at the top of the text, shown on narrow screens."""
    span = find_by_id(text, "TOC")
    if span is None or "gabarito-toc-mobile" in text:
        return text
    toc = text[span[0]:span[1]]
    m = re.search(r"<ul\b", toc)
    if not m:
        return text
    s, e = element_span(toc, m.start())
    items = re.sub(r'\s(?:id|data-scroll-target)="[^"]*"', "", toc[s:e])
    items = items.replace(' class="nav-link"', "").replace(' class="nav-link active"', "")
    block = (f'<details class="gabarito-toc-mobile"><summary>Nesta página</summary>'
             f'<nav aria-label="Nesta página">{items}</nav></details>')
    head = re.search(r"</header>", text[text.find("<main"):]) if "<main" in text else None
    if head:
        at = text.find("<main") + head.end()
    else:
        main = re.search(r"<main\b[^>]*>", text)
        if not main:
            return text
        at = main.end()
    return text[:at] + block + text[at:]


def page_links(text: str, page: Path, site: Path, order: list[tuple[str, str]]) -> str:
    """Previous and next links at the end of the page, in the navbar's order."""
    rel = page.relative_to(site).as_posix()
    outs = [PurePosixPath(src).with_suffix(".html").as_posix() for src, _ in order]
    if rel not in outs or "gabarito-page-nav" in text:
        return text
    i = outs.index(rel)

    def link(j: int, side: str, word: str) -> str:
        if not 0 <= j < len(order):
            return f'<span class="gabarito-page-{side}"></span>'
        href = _rel(Path(site) / outs[j], page)
        arrow = "←" if side == "prev" else "→"
        label = f"{arrow} {word}" if side == "prev" else f"{word} {arrow}"
        return (f'<a class="gabarito-page-{side}" href="{html.escape(href)}" rel="{side}">'
                f'<span class="gabarito-page-word">{label}</span>'
                f'<span class="gabarito-page-title">{html.escape(order[j][1])}</span></a>')

    nav = (f'<nav class="gabarito-page-nav" aria-label="Capítulos">{link(i - 1, "prev", "Anterior")}'
           f'{link(i + 1, "next", "Próximo")}</nav>')
    end = text.rfind("</main>")
    return text if end < 0 else text[:end] + nav + text[end:]


def translate_chrome(site: Path, text: str) -> str:
    for en, pt in CHROME.items():
        text = text.replace(en, pt)
    return text


def _translate_scripts(site: Path) -> None:
    for js in sorted((Path(site) / "site_libs").glob("*.js")):
        text = js.read_text(encoding="utf-8", errors="replace")
        new = text
        for en, pt in SCRIPT_CHROME.items():
            new = new.replace(en, pt)
        if new != text:
            js.write_text(new, encoding="utf-8")


def enhance_pages(site: Path, order: list[tuple[str, str]]) -> None:
    """Every step of this module's docstring but the downloads, on every page."""
    install_assets(site)
    for page in _pages(site):
        text = page.read_text(encoding="utf-8")
        text = place_search_box(replace_search_box(text))
        text = mobile_toc(unlist_quoted_headings(text))
        text = page_links(text, page, Path(site), order)
        text = translate_chrome(site, text)
        page.write_text(text, encoding="utf-8")
    _translate_scripts(site)
    write_search_index(site, _pages(site))


def copy_downloads(root: Path, site: Path) -> int:
    """Copy every study's downloadable files into ``site/downloads/``; return how many."""
    n = 0
    for path in all_downloads(root):
        dest = Path(site) / download_path(path, root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        n += 1
    return n
