"""``gabarito site --renderer quarto``: the same pages as the default build (issue 44, item 7).

Real Quarto is not installed here; ``fake_quarto`` stands in for it, rendering with smalldocs and then
doing what Quarto 1.10's own source does to a page and smalldocs does not (its widget scripts, its
margin move of every ``<aside>``). The tests check:

- Q44-aside: the markup handed to Quarto has no ``<aside>`` for a provenance box, so the box stays in
  its fold (the callout) after Quarto's margin move;
- Q44-jquery: no page of either build, and nothing handed to Quarto, carries the inline
  ``define('jquery', ...)`` shim that throws without require.js;
- Q44-inline-code, Q44-nowrap: the site's stylesheet, in Chromium at 390 px on a crafted page under
  Quarto's rules for inline code, wraps a tight list item's long code (no sideways scroll) and keeps
  number cells of both spellings of ``text-align: right`` on one line.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.publish.provenance import provenance_box
from gabarito.publish.site import render
from gabarito.publish.site.enhance import ASSETS
from gabarito.publish.site.markup import element_span

import fake_quarto
from browser import check_page, find_chromium, prepare_copy

SHIM = re.compile(r"define\(\s*['\"]jquery['\"]")
QUARTO_SHIM = ('<script type="application/javascript" data-relocate-top="true">define(\'jquery\', '
               '[],function() {return window.jQuery;})</script>\n')


# --- unit: the markup and the finishing step ------------------------------------------------------

def test_provenance_box_is_markup_quarto_leaves_in_place():
    box = provenance_box({"provenance": {"date": "2026-12-02T18:45:36+00:00", "git": {"commit": "a" * 40}}})
    assert "<aside" not in box and re.match(r'<div class="gabarito-provenance"', box)


def test_quarto_jquery_shim_goes_with_the_cdn_tags(tmp_path):
    """Quarto's widgets.ts writes require.js, jQuery and the shim; the site removes all three."""
    page = tmp_path / "a.html"
    page.write_text('<head><script src="https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js" '
                    'integrity="x" crossorigin="anonymous"></script>\n<script src="https://cdnjs.cloudflare.com/'
                    'ajax/libs/jquery/3.5.1/jquery.min.js" data-relocate-top="true"></script>\n' + QUARTO_SHIM +
                    '<script>define = 1; // the page\'s own</script></head>', encoding="utf-8")
    assert render.strip_cdn_scripts(tmp_path) == 3
    text = page.read_text(encoding="utf-8")
    assert not SHIM.search(text) and text == "<head><script>define = 1; // the page's own</script></head>"


# --- the command, on the small project of test_site -------------------------------------------------

PROVENANCE_IN_A_FOLD = [
    ("markdown", "::: {.callout-note collapse=\"true\" title=\"Detalhes\"}"),
    ("code", "from gabarito.publish.provenance import provenance_box\n"
             "display(HTML(provenance_box(results, source='case-studies/demo/results.json')))"),
    ("markdown", ":::"),
]


def gabarito_site(root: Path, out: str, renderer: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gabarito.cli", "site", "--root", str(root), "--out", out,
                           "--renderer", renderer], capture_output=True, text=True, timeout=600, env=env)


def _in_callout(page: str) -> list[bool]:
    """For each provenance box of a page, whether it sits inside a callout's body."""
    out = []
    for m in re.finditer(r'<[a-z]+\b[^>]*class="gabarito-provenance"', page):
        inside = False
        for c in re.finditer(r'<div\b[^>]*class="callout-body-container', page[:m.start()]):
            s, e = element_span(page, c.start())
            inside = inside or s < m.start() < e
        out.append(inside)
    return out


def _handed_html(handed: Path) -> str:
    """Every text/html output of the notebooks handed to Quarto, joined."""
    parts = []
    for nb in sorted(handed.rglob("*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            for o in cell.get("outputs") or []:
                value = (o.get("data") or {}).get("text/html")
                if value:
                    parts.append("".join(value) if isinstance(value, list) else value)
    return "\n".join(parts)


@pytest.mark.integration
def test_quarto_path_keeps_provenance_in_its_fold_and_no_jquery_shim(tmp_path):
    from test_site import FIXTURE_NOTEBOOK, PAGE, make_fixture

    root = make_fixture(tmp_path / "proj", notebook=FIXTURE_NOTEBOOK + PROVENANCE_IN_A_FOLD)
    default = gabarito_site(root, "site-default", "smalldocs")
    assert default.returncode == 0, default.stderr

    handed = tmp_path / "handed"
    fake_quarto.install(tmp_path / "bin", handed)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = gabarito_site(root, "site-quarto", "quarto", env=env)
    assert proc.returncode == 0, proc.stderr
    log = [json.loads(ln) for ln in (tmp_path / "quarto-log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert log[-1]["args"][0] == "render" and log[-1]["args"][2] == "--no-execute"
    assert log[-1]["widget_pages"] >= 1, "the stand-in wrote Quarto's widget scripts into the chapter page"

    # what gabarito handed to Quarto: the box, as markup Quarto leaves where it is
    outputs = _handed_html(handed)
    assert 'class="gabarito-provenance"' in outputs
    assert "<aside" not in outputs
    assert not SHIM.search(outputs)

    for name in ("site-default", "site-quarto"):
        pages = sorted(p for p in (root / name).rglob("*.html") if "site_libs" not in p.parts)
        assert pages
        for page in pages:
            assert not SHIM.search(page.read_text(encoding="utf-8")), f"{name}: {page.name} keeps define('jquery'"
        chapter = (root / name / PAGE).read_text(encoding="utf-8")
        assert _in_callout(chapter) == [True], f"{name}: the provenance box left its fold"
    assert log[-1]["asides_moved"] == 0


# --- the stylesheet in a browser ------------------------------------------------------------------

#: Quarto's rules for inline code (quarto-cli issue 13258: code gets ``white-space: pre`` outside a
#: ``<p>``, ``pre-wrap`` inside one), then the site's stylesheet, as every page loads them.
CRAFTED = """<!doctype html><html lang="pt-BR"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>code { white-space: pre; } p code:not(.sourceCode) { white-space: pre-wrap; }</style>
<link rel="stylesheet" href="gabarito.css"></head>
<body><main class="content" id="quarto-document-content">
<p>Uma lista compacta:</p>
<ul>
<li><code>gabarito.retrieval.rerank.training.CrossEncoderTrainer.fit_grouped_loss_with_checkpoints</code></li>
<li>rode <code>gabarito evaluate --documents documentos.jsonl --questions perguntas.json --measures nDCG@10 R@100</code></li>
</ul>
<div class="gabarito-table"><table class="table"><thead><tr><th>Método</th><th>Tempo</th><th>Valor</th></tr></thead>
<tbody><tr><td>Fusão das duas listas, com a primeira lida de novo</td>
<td id="site" style="text-align:right">1&nbsp;234,5 ms por pergunta</td>
<td id="pandoc" style="text-align: right;">0,875 (IC 95%: 0,775 a 0,975)</td></tr></tbody></table></div>
</main>
<script>
const ws = (id) => getComputedStyle(document.getElementById(id)).whiteSpace;
document.title = JSON.stringify({site: ws("site"), pandoc: ws("pandoc")});
</script>
</body></html>
"""


@pytest.mark.integration
def test_stylesheet_wraps_list_code_and_keeps_numbers_whole_at_390(tmp_path):
    if not find_chromium():
        pytest.fail("chromium is not installed (apt-get install -y chromium): the stylesheet is checked in a real browser")
    site = tmp_path / "crafted"
    site.mkdir()
    (site / "gabarito.css").write_text((ASSETS / "gabarito.css").read_text(encoding="utf-8"), encoding="utf-8")
    (site / "page.html").write_text(CRAFTED, encoding="utf-8")
    copy = prepare_copy(site, tmp_path / "copy")
    report = check_page(copy, "page.html", 390)
    assert not report.get("no_report"), "the crafted page did not load"
    assert json.loads(report["title"]) == {"site": "nowrap", "pandoc": "nowrap"}, report["title"]
    assert report["overflow"] == 0, (report["overflow"], report.get("overflowing"))


@pytest.mark.integration
def test_real_site_has_no_jquery_shim_and_no_aside_box(real_site):
    """The repository's own book (default build): no page carries the shim, no provenance box is an aside."""
    pages = sorted(p for p in real_site.rglob("*.html") if "site_libs" not in p.parts)
    boxes = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not SHIM.search(text), f"{page.name} keeps define('jquery'"
        assert not re.search(r'<aside\b[^>]*gabarito-provenance', text), f"{page.name}: a provenance box is an <aside>"
        boxes += text.count('class="gabarito-provenance"')
    assert boxes >= 7, "every chapter shows where its numbers come from"
