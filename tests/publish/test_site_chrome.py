"""The page's frame: the search box in the navbar's menu, quoted headings out of the contents list,
and the navbar's pages in order, named by their titles."""

from __future__ import annotations

import json
import re

from gabarito.publish.site import chrome
from gabarito.publish.site.enhance import SEARCH_BOX
from gabarito.publish.site.project import navigation, page_title

COLLAPSE = ('<div class="collapse navbar-collapse" id="navbarCollapse"><ul class="navbar-nav"><li class="nav-item">'
            '<a class="nav-link" href="a.html">A</a></li></ul>{inside}</div>')
#: Quarto's navbar: its search <div> between the title and the menu button.
QUARTO_NAV = ('<nav class="navbar navbar-expand-lg"><div class="navbar-container container-fluid">'
              '<div class="navbar-brand-container mx-auto"><a class="navbar-brand" href="index.html">'
              '<span class="navbar-title">gabarito</span></a></div>{search}'
              '<button class="navbar-toggler" type="button"></button>' + COLLAPSE + '</div></nav>')


def _collapse_of(page: str) -> str:
    m = re.search(r'<div class="collapse navbar-collapse"', page)
    start, end = chrome.element_span(page, m.start())
    return page[start:end]


def test_search_box_before_the_menu_moves_into_it():
    page = QUARTO_NAV.format(search=SEARCH_BOX, inside="")
    out = chrome.place_search_box(page)
    assert out.count('class="gabarito-search"') == 1
    assert 'class="gabarito-search"' in _collapse_of(out)
    assert out.index("navbar-title") < out.index("navbar-toggler") < out.index("gabarito-search")
    assert out.endswith("</div></nav>") and out.count("<div") == out.count("</div>")


def test_search_box_after_the_menu_moves_into_it():
    page = ('<nav class="navbar"><div class="navbar-container">' + COLLAPSE.format(inside="") + SEARCH_BOX
            + '</div></nav>')
    out = chrome.place_search_box(page)
    assert 'class="gabarito-search"' in _collapse_of(out) and out.count('class="gabarito-search"') == 1
    assert out.count("<div") == out.count("</div>")


def test_search_box_already_in_the_menu_or_no_menu_is_left_alone():
    inside = COLLAPSE.format(inside=f'<div class="quarto-navbar-tools">{SEARCH_BOX}</div>')
    assert chrome.place_search_box(inside) == inside
    bare = f"<nav>{SEARCH_BOX}</nav>"
    assert chrome.place_search_box(bare) == bare


TOC_PAGE = """<div id="quarto-margin-sidebar"><nav id="TOC" role="doc-toc"><h2 id="toc-title">Nesta página</h2>
<ul><li><a href="#um" id="toc-um">Um</a></li><li><a href="#guia" id="toc-guia">Guia</a><ul>
<li><a href="#as-notas" id="toc-as-notas">As notas</a></li><li><a href="#dois" id="toc-dois">Dois</a><ul>
<li><a href="#dois-a" id="toc-dois-a">Dois A</a></li></ul></li></ul></li></ul></nav></div>
<main><section id="um"><h2>Um</h2><blockquote><h1 id="guia">Guia</h1><p>texto</p><h2 id="as-notas">As notas</h2>
</blockquote></section><section id="dois"><h2>Dois</h2><section id="dois-a"><h3>Dois A</h3></section></section></main>"""


def test_quoted_headings_leave_the_contents_list_and_the_sections_they_held_stay():
    assert chrome.quoted_heading_ids(TOC_PAGE) == {"guia", "as-notas"}
    out = chrome.unlist_quoted_headings(TOC_PAGE)
    toc = out[out.index('<nav id="TOC"'):out.index("</nav>")]
    assert re.findall(r'href="#([^"]+)"', toc) == ["um", "dois", "dois-a"]
    assert 'id="guia"' in out and 'id="as-notas"' in out  # the headings themselves stay in the page
    assert toc.count("<ul") == toc.count("</ul>") == 2


def test_a_page_without_quoted_headings_is_unchanged():
    page = TOC_PAGE.replace("<blockquote>", "<div>").replace("</blockquote>", "</div>")
    assert chrome.unlist_quoted_headings(page) == page


def _notebook(path, title):
    cells = [{"cell_type": "raw", "metadata": {}, "source": [f'---\ntitle: "{title}"\nlang: pt-BR\n---']}]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")


def test_navigation_reads_menus_and_names_entries_by_their_titles(tmp_path):
    (tmp_path / "notebooks").mkdir()
    _notebook(tmp_path / "index.ipynb", "gabarito")
    _notebook(tmp_path / "notebooks" / "a.ipynb", "Como o benchmark foi feito")
    _notebook(tmp_path / "notebooks" / "b.ipynb", "Mais de uma resposta certa")
    cfg = {"website": {"navbar": {"left": [{"text": "Capítulos", "menu": [
        {"href": "notebooks/a.ipynb"}, {"href": "notebooks/b.ipynb", "text": "Outro nome"}]}]}}}
    assert page_title(tmp_path / "notebooks" / "a.ipynb") == "Como o benchmark foi feito"
    assert navigation(cfg, tmp_path) == [("index.ipynb", "Início"),
                                         ("notebooks/a.ipynb", "Como o benchmark foi feito"),
                                         ("notebooks/b.ipynb", "Outro nome")]
    assert navigation(cfg) == [("notebooks/a.ipynb", "notebooks/a.ipynb"), ("notebooks/b.ipynb", "Outro nome")]


def test_the_real_navbar_names_every_chapter_by_its_title():
    from pathlib import Path

    from gabarito.publish.site.project import load_config

    root = Path(__file__).resolve().parents[2]
    order = navigation(load_config(root), root)
    assert order[0][0] == "index.ipynb"
    chapters = order[1:]
    assert len(chapters) >= 7 and all(href.startswith("notebooks/") for href, _ in chapters)
    assert all(text == page_title(root / href) for href, text in chapters)
