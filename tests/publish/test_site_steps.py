"""The site build's steps, each on its own: floats and references, stray markup, the reader's
additions (folding contents, links, offline search), CDN tags, the dirty-tree guard, the copy."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from gabarito.errors import GabaritoError
from gabarito.publish.site import enhance, gold, markup, prepare, project, render


def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    make = {"md": nbformat.v4.new_markdown_cell, "code": nbformat.v4.new_code_cell}
    nb.cells = [make[k](src) for k, src in cells]
    return nb


def _html_output(value: str):
    return nbformat.v4.new_output("display_data", data={"text/html": value})


def test_floats_are_numbered_and_referenced_for_smalldocs():
    nb = _nb(("md", "Veja a @fig-a, a @tbl-b e a @fig-c; e-mail x@fig-z não conta."),
             ("code", "#| label: fig-a\n#| fig-cap: \"Primeira <figura>.\"\nfig.show()"),
             ("code", "#| label: tbl-b\n#| tbl-cap: \"Uma tabela.\"\nshow()"),
             ("code", "#| label: fig-c\n#| fig-cap: \"Segunda.\"\nshow()"))
    nb.cells[1].outputs = [_html_output('<div class="plotly-graph-div"></div>')]
    nb.cells[2].outputs = [_html_output("<table><tr><td>1</td></tr></table>")]
    nb.cells[3].outputs = [_html_output("<svg></svg>")]
    prepare.check_floats(nb, "x.ipynb")
    prepare.number_floats(nb)
    text = nb.cells[0].source
    assert '<a href="#fig-a" class="quarto-xref">Figura&nbsp;1</a>' in text
    assert '<a href="#tbl-b" class="quarto-xref">Tabela&nbsp;1</a>' in text
    assert 'href="#fig-c" class="quarto-xref">Figura&nbsp;2<' in text and "x@fig-z" in text
    fig = nb.cells[1].outputs[0]["data"]["text/html"]
    assert 'id="fig-a"' in fig and "Figura&nbsp;1: Primeira &lt;figura&gt;.</figcaption>" in fig
    tbl = nb.cells[2].outputs[0]["data"]["text/html"]
    assert tbl.index("<figcaption") < tbl.index("<table")  # a table's caption goes above it
    assert "label" not in nb.cells[1].source and "fig-cap" not in nb.cells[1].source


@pytest.mark.parametrize("cells, message", [
    ([("code", "#| fig-cap: \"Sem rótulo.\"\nx")], "no '#| label: fig-"),
    ([("code", "#| label: fig-a\nx")], "has no fig-cap"),
    ([("md", "Veja a @fig-nada.")], "refers to no figure"),
    ([("code", "#| label: tbl-a\n#| tbl-cap: a\nx"), ("code", "#| label: tbl-a\n#| tbl-cap: b\nx")], "used twice"),
])
def test_check_floats_refuses(cells, message):
    with pytest.raises(GabaritoError, match=message):
        prepare.check_floats(_nb(*cells), "x.ipynb")


def test_a_figure_cell_shows_one_output():
    nb = _nb(("code", "#| label: fig-a\n#| fig-cap: \"Uma figura.\"\nfig.show()\ndisplay(Markdown('nota'))"))
    nb.cells[0].outputs = [_html_output("<svg></svg>"), nbformat.v4.new_output("stream", text="aviso\n")]
    prepare.check_floats(nb, "x.ipynb")  # a stream is not shown as a figure
    nb.cells[0].outputs.append(nbformat.v4.new_output("display_data", data={"text/markdown": "nota"}))
    with pytest.raises(GabaritoError, match="shows 2 outputs"):
        prepare.check_floats(nb, "x.ipynb")


def test_stray_markup_is_found():
    page = ("<html><head><title>ok</title></head><body><p>texto</p><svg><title>ok</title><text>x</text></svg>"
            "<my-widget></my-widget><p>query text = <title> e <docno></p></body></html>")
    assert [t for _, t in markup.stray_elements(page)] == ["title", "docno"]
    assert markup.stray_elements("<html><body><p>&lt;title&gt;</p></body></html>") == []


def test_check_markup_refuses_a_page(tmp_path):
    (tmp_path / "p.html").write_text("<html><body><p>a <DOCNO> b</p></body></html>", encoding="utf-8")
    with pytest.raises(GabaritoError, match="not HTML"):
        markup.check_markup(tmp_path)


PAGE = """<html><head><title>Capítulo – gabarito</title></head><body>
<nav><div class="quarto-navbar-tools"><div class="smalldocs-search" id="quarto-search"><div><input placeholder="Search"></div></div></div></nav>
<div id="quarto-margin-sidebar"><nav id="TOC" role="doc-toc"><h2 id="toc-title">Nesta página</h2><ul><li><a href="#um" id="toc-um" class="nav-link">Um</a></li></ul></nav></div>
<main class="content"><header id="title-block-header"><h1>Capítulo</h1></header>
<section id="um"><h2 data-anchor-id="um">Um congelamento</h2><p>O gabarito é congelado.</p>
<details class="code-fold"><summary>Mostrar código</summary><pre><code>x = 1</code></pre></details></section>
</main><button title="Copy to Clipboard">c</button></body></html>"""


def test_reader_additions(tmp_path):
    site = tmp_path / "site"
    (site / "notebooks").mkdir(parents=True)
    (site / "index.html").write_text(PAGE, encoding="utf-8")
    (site / "notebooks" / "b.html").write_text(PAGE, encoding="utf-8")
    order = [("index.ipynb", "Início"), ("notebooks/b.ipynb", "Capítulo B")]
    enhance.enhance_pages(site, order)
    text = (site / "notebooks" / "b.html").read_text(encoding="utf-8")
    assert 'id="quarto-search"' not in text and 'placeholder="Buscar no site"' in text
    assert '<details class="gabarito-toc-mobile"><summary>Nesta página</summary>' in text
    assert text.index("gabarito-toc-mobile") > text.index("</header>")  # at the top of the text
    assert 'href="../index.html" rel="prev"' in text and 'rel="next"' not in text
    assert 'title="Copiar"' in text and "Copy to Clipboard" not in text
    assert 'href="../site_libs/gabarito/gabarito.css"' in text
    index = (site / "site_libs" / "gabarito" / "search-index.js").read_text(encoding="utf-8")
    assert index.startswith("window.GABARITO_SEARCH = ")
    entries = json.loads(index[len("window.GABARITO_SEARCH = "):].rstrip().rstrip(";"))
    hit = [e for e in entries if e["section"] == "Um congelamento"]
    assert hit and hit[0]["href"] == "index.html#um" and "congelado" in hit[0]["text"]
    assert all("Mostrar código" not in e["text"] for e in entries)  # a toggle's label, not the page's text
    assert "x = 1" in hit[0]["text"]  # code blocks are searchable (tests/publish/test_search_text.py)


def test_quarto_cdn_tags_are_removed(tmp_path):
    page = tmp_path / "a.html"
    page.write_text('<head><script src="https://cdn.jsdelivr.net/npm/requirejs@2.3.6/require.min.js" '
                    'integrity="x" crossorigin="anonymous"></script>\n<script src="https://cdnjs.cloudflare.com/'
                    'ajax/libs/jquery/3.5.1/jquery.min.js"></script><script src="https://cdn.plot.ly/plotly-2.3.js">'
                    '</script><script src="local.js"></script></head>', encoding="utf-8")
    assert render.strip_cdn_scripts(tmp_path) == 3
    assert page.read_text(encoding="utf-8") == '<head><script src="local.js"></script></head>'


def _study(root: Path, dirty: bool) -> None:
    study = root / "case-studies" / "s"
    study.mkdir(parents=True)
    (study / "results.json").write_text(json.dumps({"provenance": {"git": {"commit": "abc", "dirty": dirty}}}),
                                        encoding="utf-8")


def test_results_of_a_dirty_tree_are_refused_unless_allowed(tmp_path, monkeypatch):
    _study(tmp_path, dirty=True)
    monkeypatch.delenv(gold.ALLOW_DIRTY_ENV, raising=False)
    with pytest.raises(GabaritoError, match="uncommitted changes.*allow-dirty"):
        gold.check_clean(tmp_path, allow_dirty=gold.allow_dirty_default())
    assert gold.check_clean(tmp_path, allow_dirty=True) == [tmp_path / "case-studies" / "s" / "results.json"]
    monkeypatch.setenv(gold.ALLOW_DIRTY_ENV, "1")
    assert gold.allow_dirty_default() is True


def test_clean_results_pass(tmp_path):
    _study(tmp_path, dirty=False)
    assert gold.check_clean(tmp_path, allow_dirty=False) == []


def test_staging_copies_never_links(tmp_path):
    root = tmp_path / "proj"
    (root / "notebooks").mkdir(parents=True)
    (root / "case-studies").mkdir()
    (root / ".gitignore").write_text("x\n", encoding="utf-8")
    (root / "notebooks" / "a.ipynb").write_text("{}", encoding="utf-8")
    (root / "case-studies" / "r.json").write_text("{}", encoding="utf-8")
    stage = tmp_path / "stage"
    assert project.stage_project(root, stage, skip=set()) == 2
    staged = stage / ".gitignore"
    assert os.stat(staged).st_ino != os.stat(root / ".gitignore").st_ino
    staged.write_text("x\n/.quarto/\n", encoding="utf-8")  # what Quarto does to its project
    assert (root / ".gitignore").read_text(encoding="utf-8") == "x\n"
    assert not (stage / "case-studies").exists()  # data reaches the site as downloads only


@pytest.mark.integration
def test_executing_a_notebook_leaves_no_kernel_running(tmp_path):
    """Before: the kernel manager was handed to nbclient, which then does not stop its kernel:
    every page of every build left an ipykernel process until the build's process ended."""
    import os
    import subprocess

    import nbformat

    from gabarito.publish.site.execute import execute_notebook

    (tmp_path / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(1)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = tmp_path / "notebooks" / "a.ipynb"
    nbformat.write(nb, str(src))
    executed = execute_notebook(src, tmp_path)
    assert executed.cells[0].outputs[0]["text"].strip() == "1"
    children = subprocess.run(["ps", "--ppid", str(os.getpid()), "-o", "cmd="], capture_output=True,
                              text=True).stdout
    assert "ipykernel" not in children, children


def test_a_page_that_computes_a_statistic_fails_with_one_line_naming_it(tmp_path):
    """Issue 40: a page reads the statistics its study stored. In the page's kernel every
    statistic of the library is refused, with the page and the statistic named; a worked example
    declared as such (begin_example / end_example) runs."""
    import nbformat

    from gabarito.publish.site.execute import execute_notebook

    (tmp_path / "notebooks").mkdir()

    def page(name: str, *cells: str):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        src = tmp_path / "notebooks" / name
        nbformat.write(nb, str(src))
        return src

    computes = page("a.ipynb", "from gabarito.measure import stats\nprint(stats.holm({'a': 0.01, 'b': 0.04}))")
    with pytest.raises(GabaritoError, match=r"a cell failed: GabaritoError: notebooks/a\.ipynb: a Holm correction "
                                            r"computed while the page builds"):
        execute_notebook(computes, tmp_path)
    example = page("b.ipynb", "from gabarito.core import page_guard\npage_guard.begin_example('o exemplo do leitor')",
                   "from gabarito.measure import stats\nprint(stats.holm({'a': 0.01, 'b': 0.04})['a'])",
                   "page_guard.end_example()")
    assert execute_notebook(example, tmp_path).cells[1].outputs[0]["text"].strip() == "0.02"


def test_cached_outputs_go_stale_when_the_navbar_or_another_page_changes(tmp_path):
    from gabarito.publish.site.execute import inputs_digest

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_quarto.yml").write_text("website:\n  title: a\n")
    (tmp_path / "notebooks" / "a.ipynb").write_text("{}")
    first = inputs_digest(tmp_path)
    (tmp_path / "_quarto.yml").write_text("website:\n  title: b\n")
    second = inputs_digest(tmp_path)
    (tmp_path / "notebooks" / "a.ipynb").write_text('{"cells": []}')
    assert len({first, second, inputs_digest(tmp_path)}) == 3


def test_a_table_cell_shows_one_output():
    nb = _nb(("code", "#| label: tbl-a\n#| tbl-cap: \"Uma tabela.\"\nshow()\ndisplay(Markdown('nota'))"))
    nb.cells[0].outputs = [_html_output("<table><tr><td>1</td></tr></table>")]
    prepare.check_floats(nb, "x.ipynb")
    nb.cells[0].outputs.append(nbformat.v4.new_output("display_data", data={"text/markdown": "nota"}))
    with pytest.raises(GabaritoError, match="sub-tables"):
        prepare.check_floats(nb, "x.ipynb")
