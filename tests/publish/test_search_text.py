"""The offline search's words: Python (the index, ``gabarito.publish.site.search``) and the reader's
browser (the query, ``assets/search.js``) fold, cut and stem every word of a list the same way, and
the browser's search finds what the index holds (a word deep in a long section, a code block, a stem
variant), linking to the section.

The script runs in Node where it is installed, else in headless Chromium (what CI installs).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat
import pytest

from gabarito.errors import GabaritoError
from gabarito.publish.site import enhance, prepare, search

from browser import find_chromium

REPO = Path(__file__).resolve().parents[2]
SEARCH_JS = REPO / "gabarito" / "publish" / "site" / "assets" / "search.js"

#: Words whose handling is easy to get wrong: accents, plurals, verb forms, codes, odd letters.
EDGE_WORDS = [
    "instalar", "instale", "Instalação", "instalações", "instalado", "instalando", "instalou", "install",
    "INSTALAR", "pip", "MMR", "Glasgow", "ERR-PIX-002", "nDCG@10", "e5-small", "R@10", "coleção", "coleções",
    "pergunta", "perguntas", "perguntar", "ações", "pães", "animais", "papéis", "anzóis", "itens", "melhores",
    "vezes", "meses", "rapidamente", "busca", "buscas", "buscando", "buscaram", "rerankers", "fusão", "Fusão",
    "não", "é", "à", "às", "São Paulo", "naïve", "coöperate", "İstanbul", "ΣΑΣ", "Straße", "ﬁm", "e\u0301",
    "a\u0301gua", "𝔸lfa", "½", "x²", "a_b", "٣٤", "中文", "क्षि", "😀ok", "dados.", "“aspas”", "foo:bar",
    "de", "para", "como", "mais", "", "  ", "a", "aa", "aaa", "aaaa", "aaaaa", "ses", "sess", "res", "eis",
]


def _corpus_words() -> list[str]:
    """The words of the site's own prose: every notebook's Markdown cells."""
    out: list[str] = []
    for path in sorted([REPO / "index.ipynb", *(REPO / "notebooks").glob("*.ipynb")]):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                out += re.findall(r"\S+", "".join(cell["source"]))
    return sorted(set(out))


def run_js(expression: str, data) -> object:
    """``expression`` (JavaScript, with ``T`` the search API and ``D`` the data) evaluated by the
    browser's own search script; its JSON value."""
    node = shutil.which("node")
    if node:
        script = (f"const T = require({json.dumps(str(SEARCH_JS))}); const D = JSON.parse(require('fs')"
                  f".readFileSync(0, 'utf8')); process.stdout.write(JSON.stringify({expression}));")
        proc = subprocess.run([node, "-e", script], input=json.dumps(data), capture_output=True, text=True,
                              timeout=120, check=True)
        return json.loads(proc.stdout)
    chromium = find_chromium()
    if not chromium:
        pytest.fail("neither node nor chromium is installed: the browser's search script cannot be checked")
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "t.html"
        payload = json.dumps(data).replace("</", "<\\/")
        page.write_text(f'<!doctype html><meta charset="utf-8"><body><script src="{SEARCH_JS.as_uri()}"></script>'
                        f"<script>const T = window.gabaritoSearchText; const D = {payload};"
                        f"document.body.textContent = JSON.stringify({expression});</script></body>",
                        encoding="utf-8")
        with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
            proc = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                                   f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                                  capture_output=True, text=True, timeout=120, check=True)
    import html

    body = re.search(r"<body>(.*)</body>", proc.stdout, re.S).group(1)
    return json.loads(html.unescape(re.sub(r"<script.*?</script>", "", body, flags=re.S)))


# --- the same words in Python and in the browser --------------------------------------------------

def test_python_and_the_browser_normalise_every_word_alike():
    words = EDGE_WORDS + _corpus_words()
    assert len(words) > 1000  # the site's prose, not only the edge cases
    js = run_js("D.map((w) => [T.fold(w), T.words(w), T.terms(w), T.queryTerms(w)])", words)
    py = [[search.fold(w), search.words(w), search.terms(w), search.query_terms(w)] for w in words]
    differ = [(w, p, j) for w, p, j in zip(words, py, js) if p != j]
    assert not differ, differ[:10]


def test_the_stemmer_joins_the_forms_a_reader_types():
    assert {search.stem(w) for w in search.words("instalar instale Instalação instalações instalado instalando")} == {"instal"}
    assert search.terms("Perguntas pergunta") == ["pergunt", "pergunt"]
    assert search.terms("ERR-PIX-002 nDCG@10 MMR") == ["err", "pix", "002", "ndcg", "10", "mmr"]  # codes whole
    assert search.fold("Fusão À Coleção") == "fusao a colecao"
    assert search.query_terms("como instalar o gabarito") == ["instal", "gabarit"]
    assert search.query_terms("de") == ["de"]  # a query of function words alone still searches


# --- the index and the browser's search ------------------------------------------------------------

LONG = " ".join(f"Parágrafo {i} sobre a medida." for i in range(700))  # ~18,000 characters
PAGE = f"""<html><head><title>Avalie – gabarito</title></head><body><main>
<details class="gabarito-toc-mobile"><summary>Nesta página</summary><nav><ul><li>Instale e rode</li></ul></nav></details>
<section id="instale-e-rode"><h2 data-anchor-id="instale-e-rode">Instale e rode</h2><p>Baixe o pacote.</p>
<div class="sourceCode"><pre class="sourceCode bash"><code><span id="cb1-1"><span class="ex">pip</span> ins<span>tall</span> gabarito.whl</span></code></pre></div>
</section>
<section id="detalhes"><h2 id="detalhes">Detalhes</h2><div class="callout-collapse collapse"><p>{LONG}</p>
<p>O exemplo do MMR, com as perguntas de Glasgow.</p>
<details class="code-fold"><summary>Mostrar código</summary><pre><code>segredo = 1</code></pre></details></div></section>
</main></body></html>"""


def test_the_index_holds_whole_sections_with_their_code_and_the_browser_finds_them(tmp_path):
    site = tmp_path / "site"
    (site / "notebooks").mkdir(parents=True)
    page = site / "notebooks" / "avalie.html"
    page.write_text(PAGE, encoding="utf-8")
    assert search.write_search_index(site, [page]) == 2
    text = (site / search.SEARCH_INDEX).read_text(encoding="utf-8")
    entries = json.loads(text[len("window.GABARITO_SEARCH = "):].rstrip().rstrip(";"))
    detalhes = next(e for e in entries if e["section"] == "Detalhes")
    assert len(detalhes["text"]) > 15_000 and "Glasgow" in detalhes["text"]  # whole, not cut at 4,000
    assert "segredo = 1" in detalhes["text"] and "Mostrar código" not in detalhes["text"]  # the code, not its label
    install = next(e for e in entries if e["section"] == "Instale e rode")
    assert "pip install gabarito.whl" in install["text"]  # a highlighted line read whole
    assert "Nesta página" not in json.dumps(entries, ensure_ascii=False)
    assert set(install["terms"].split()) == set(search.terms(install["text"]))
    found = run_js("['MMR', 'glasgow', 'instalar', 'pip install', 'Instalação', 'xqzwvyk', 'de']"
                   ".map((q) => T.find(D, q).map((e) => e.href))", entries)
    assert found == [["notebooks/avalie.html#detalhes"], ["notebooks/avalie.html#detalhes"],
                     ["notebooks/avalie.html#instale-e-rode"], ["notebooks/avalie.html#instale-e-rode"],
                     ["notebooks/avalie.html#instale-e-rode"], [], ["notebooks/avalie.html#detalhes"]]
    marked = run_js("T.highlight(D, 'instalar').filter((p) => p[1]).map((p) => p[0])", install["text"])
    assert marked == ["install"]


def test_every_page_loads_the_search_script_after_its_index(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(PAGE, encoding="utf-8")
    enhance.install_assets(site)
    head = (site / "index.html").read_text(encoding="utf-8")
    order = [head.index(f"site_libs/gabarito/{name}") for name in ("search-index.js", "gabarito.js", "search.js")]
    assert order == sorted(order) and (site / "site_libs" / "gabarito" / "search.js").is_file()


# --- code only where it teaches --------------------------------------------------------------------

def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    make = {"md": nbformat.v4.new_markdown_cell, "code": nbformat.v4.new_code_cell}
    nb.cells = [make[k](src) for k, src in cells]
    return nb


CFG = {"format": {"html": {"code-fold": False, "code-summary": "Mostrar código"}}}


def test_code_is_hidden_but_where_it_teaches():
    nb = _nb(("code", "#| code-summary: \"Mostrar código: carregar\"\nx = 1"),
             ("md", "## O essencial\n\n```bash\n## Reproduzir (a comment in a code block, not a heading)\n```"),
             ("code", "#| label: fig-a\n#| fig-cap: \"Uma figura.\"\nfig.show()"),
             ("md", "## Reproduzir {#reproduzir}"),
             ("code", "display(HTML(downloads_block(BASE)))"),
             ("code", "#| code-fold: false\nprint('rode isto')"),
             ("code", "#| echo: true\n#| code-fold: true\nprint('dobrado')"))
    prepare.show_code(nb, CFG, "x.ipynb")
    opts = [prepare.cell_options(prepare.source(c)) for c in nb.cells]
    assert [o.get("echo") for o in opts] == [False, None, False, None, False, True, True]
    assert "code-summary" not in opts[0] and opts[2]["label"] == "fig-a"  # the float's own options kept
    assert opts[5]["code-fold"] is False and opts[6]["code-fold"] is True
    assert opts[6]["code-summary"] == "Mostrar código"


@pytest.mark.parametrize("cells, where", [
    ([("md", "## O essencial"), ("code", "#| echo: true\nx = 1")], "under 'O essencial'"),
    ([("code", "#| code-fold: false\nx = 1")], "before the first section"),
    ([("md", "## Reproduzir\n\n```\n## Detalhes\n```\n\n## Detalhes"), ("code", "#| echo: true\nx")], "under 'Detalhes'"),
])
def test_code_shown_outside_the_sections_that_teach_is_refused(cells, where):
    with pytest.raises(GabaritoError, match=rf"x\.ipynb: cell {len(cells) - 1} shows its code {where}"):
        prepare.show_code(_nb(*cells), CFG, "x.ipynb")
