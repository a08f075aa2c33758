"""The site build: gold check first, notebooks run, rendered offline, checked in a real browser.

Integration tests: they start Jupyter kernels and headless Chromium (``/usr/bin/chromium``).
``test_fixture_*`` build a small project made here; ``test_real_*`` build the repository's own.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import time
from pathlib import Path

import nbformat
import pytest

from gabarito.errors import GabaritoError
from gabarito.inputs.gold import freeze
from gabarito.hashing import sha256_file
from gabarito.publish.plots import FIGURE_MARKER
from gabarito.publish.site import build, remote_loads
from gabarito.study.records import write_measurement, write_results

from browser import find_chromium, open_page

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
PAGE = "notebooks/benchmark_rrf.html"
CDN = re.compile(r"cdn\.plot\.ly|jsdelivr|cdnjs|unpkg|googleapis|mathjax", re.I)


# --- helpers ---------------------------------------------------------------------------------

class _Rows(html.parser.HTMLParser):
    """Count the ``<tr>`` in the ``<tbody>`` of the element with a given id (a table or its wrapper)."""

    def __init__(self, element_id: str):
        super().__init__()
        self.element_id = element_id
        self.depth = 0  # > 0 while inside the element
        self.in_tbody = 0
        self.rows = 0
        self.found = False

    def handle_starttag(self, tag, attrs):
        if self.depth == 0 and dict(attrs).get("id") == self.element_id and not self.found:
            self.found = True
            self.depth = 1
            return
        if self.depth:
            if tag not in ("br", "img", "input", "hr", "meta", "link", "col", "wbr"):
                self.depth += 1
            if tag == "tbody":
                self.in_tbody += 1
            elif tag == "tr" and self.in_tbody:
                self.rows += 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1
            if tag == "tbody":
                self.in_tbody -= 1


def tbody_rows(dom: str, element_id: str) -> int | None:
    p = _Rows(element_id)
    p.feed(dom)
    return p.rows if p.found else None


def require_chromium() -> None:
    if not find_chromium():
        pytest.fail("chromium is not installed (apt-get install -y chromium): the site is checked in a real browser")


def assert_offline(site: Path, visit) -> None:
    assert remote_loads(site) == []
    for page in site.rglob("*.html"):
        for tag in re.findall(r"<(?:script|link)\b[^>]*>", page.read_text(encoding="utf-8")):
            assert not CDN.search(tag), f"{page}: {tag}"
            assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//(?!127\.0\.0\.1)""", tag), f"{page}: {tag}"
    assert visit.external_requests == [], visit.external_requests
    assert visit.missing == [], visit.missing
    assert all(path.startswith("/") for path, _ in visit.served)


def snapshot(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): sha256_file(p) for p in sorted(folder.rglob("*")) if p.is_file()}


# --- a small project made here ------------------------------------------------------------------

FIXTURE_NOTEBOOK = [
    ("raw", "---\ntitle: \"Como o benchmark foi feito\"\n---"),
    ("markdown", "## Resultados\n\nO gráfico e a tabela são lidos do arquivo de resultados."),
    ("markdown", "A @fig-posicoes mostra a posição do alvo."),
    ("code", "#| label: fig-posicoes\n#| fig-cap: \"Posição do alvo em cada pergunta.\"\n"
             "import json\n"
             "import plotly.graph_objects as go\n"
             "from IPython.display import HTML, display\n\n"
             "results = json.load(open('../case-studies/demo/results.json', encoding='utf-8'))\n"
             "rows = results['per_question']\n"
             "go.Figure(go.Bar(x=[r['id'] for r in rows], y=[r['rank'] for r in rows])).show()"),
    ("code", "#| eval: false\nraise RuntimeError('a cell marked eval: false must not run')"),
    ("code", "body = ''.join(f\"<tr><td>{r['id']}</td><td>{r['rank']}</td></tr>\" for r in rows)\n"
             "display(HTML('<table id=\"per-question\" class=\"table\"><thead><tr><th>pergunta</th>'\n"
             "             f'<th>posição</th></tr></thead><tbody>{body}</tbody></table>'))"),
]


INDEX = "---\ntitle: \"gabarito\"\n---\n\nO primeiro capítulo: [o benchmark](notebooks/benchmark_rrf.ipynb).\n"


def make_fixture(root: Path, n: int = 40, *, notebook=FIXTURE_NOTEBOOK) -> Path:
    """A site project like the real one: its _quarto.yml (with a .qmd home page), one study, one notebook."""
    import yaml

    root.mkdir(parents=True, exist_ok=True)
    cfg = yaml.safe_load((REPO / "_quarto.yml").read_text(encoding="utf-8"))
    cfg["project"]["render"] = ["index.qmd", "notebooks/*.ipynb"]
    cfg["website"]["navbar"]["left"] = [{"href": "index.qmd", "text": "Início"},
                                        {"href": "notebooks/benchmark_rrf.ipynb", "text": "Como o benchmark foi feito"}]
    (root / "_quarto.yml").write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False), encoding="utf-8")
    (root / "index.qmd").write_text(INDEX, encoding="utf-8")
    study = root / "case-studies" / "demo"
    study.mkdir(parents=True)
    pairs = [{"id": f"q{i:02d}", "question": f"Pergunta de teste {i}?", "gold": f"Concept_{i}"} for i in range(1, n + 1)]
    (study / "questions.json").write_text(json.dumps({"name": "demo", "pairs": pairs}, indent=1), encoding="utf-8")
    freeze(study / "gold.lock.json", [study / "questions.json"], note="fixture")
    results = {
        "provenance": {"gold_sha256": {"questions.json": sha256_file(study / "questions.json")}},
        "per_question": [{"id": p["id"], "rank": 1 + (i * 7) % 11} for i, p in enumerate(pairs)],
    }
    write_results(study / "results.json", results)  # as a study run writes it: recorded in the manifest
    nb = nbformat.v4.new_notebook()
    maker = {"raw": nbformat.v4.new_raw_cell, "markdown": nbformat.v4.new_markdown_cell, "code": nbformat.v4.new_code_cell}
    nb.cells = [maker[kind](src) for kind, src in notebook]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (root / "notebooks").mkdir()
    nbformat.write(nb, str(root / "notebooks" / "benchmark_rrf.ipynb"))
    return root


def edit_question(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["pairs"][0]["question"] += " (editada depois)"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def leftovers(root: Path, out: Path) -> list[str]:
    """Staging folders or half-swapped outputs a build left behind."""
    stages = list((root / ".cache" / "site").glob("stage-*"))
    halves = list(out.parent.glob(f".{out.name}.*"))
    return [str(p) for p in stages + halves]


# --- the fixture ---------------------------------------------------------------------------------

def test_fixture_site_builds_offline(tmp_path):
    require_chromium()
    root = make_fixture(tmp_path / "proj")
    committed = root / "notebooks" / "benchmark_rrf.ipynb"
    before = sha256_file(committed)
    out = tmp_path / "site"

    t0 = time.perf_counter()
    assert build(root, out=out, renderer="smalldocs") == out.resolve()
    cold = time.perf_counter() - t0

    assert sha256_file(committed) == before, "the committed notebook must never be written"
    assert all(not c.get("outputs") for c in nbformat.read(str(committed), as_version=4).cells)
    assert (out / "index.html").is_file() and (out / PAGE).is_file()
    assert (out / "site_libs" / "plotly" / "plotly.min.js").is_file()
    page_html = (out / PAGE).read_text(encoding="utf-8")
    assert '<script src="../site_libs/plotly/plotly.min.js"' in page_html
    assert 'lang="pt-BR"' in page_html
    assert "Mostrar código" not in page_html and "go.Figure" not in page_html  # code only where it teaches: none here
    assert "Figura&nbsp;1: Posição do alvo em cada pergunta.</figcaption>" in page_html
    assert re.search(r'<a href="#fig-posicoes" class="quarto-xref">Figura(&nbsp;|\xa0)1</a>', page_html)

    visit = open_page(out, PAGE)
    assert '<svg class="main-svg"' in visit.dom, "the plotly chart did not draw"
    assert tbody_rows(visit.dom, "per-question") == 40
    assert any(path.startswith("/site_libs/plotly/plotly.min.js") for path, _ in visit.served)
    assert_offline(out, visit)
    assert leftovers(root, out) == []

    executed = root / ".cache" / "site" / "executed" / "notebooks" / "benchmark_rrf.ipynb"
    mtime = executed.stat().st_mtime_ns
    t0 = time.perf_counter()
    build(root, out=out, renderer="smalldocs")
    warm = time.perf_counter() - t0
    assert executed.stat().st_mtime_ns == mtime, "an unchanged notebook must not run again"
    assert warm < 15, f"a no-change rebuild took {warm:.1f} s (cold {cold:.1f} s)"
    assert tbody_rows((out / PAGE).read_text(encoding="utf-8"), "per-question") == 40

    # a change in what the notebook reads runs it again
    results = root / "case-studies" / "demo" / "results.json"
    data = json.loads(results.read_text(encoding="utf-8"))
    data["per_question"] = data["per_question"][:39]
    write_results(results, data)  # a rerun of the study
    build(root, out=out, renderer="smalldocs")
    assert executed.stat().st_mtime_ns != mtime
    assert tbody_rows((out / PAGE).read_text(encoding="utf-8"), "per-question") == 39


def test_fixture_refuses_results_of_another_gold(tmp_path):
    """A question edited and the gold frozen again, but the study not rerun: the build refuses."""
    root = make_fixture(tmp_path / "proj")
    out = tmp_path / "site"
    build(root, out=out, renderer="smalldocs")
    site_before = snapshot(out)

    study = root / "case-studies" / "demo"
    edit_question(study / "questions.json")
    freeze(study / "gold.lock.json", [study / "questions.json"], note="frozen again")
    with pytest.raises(GabaritoError) as err:
        build(root, out=out, renderer="smalldocs")
    msg = str(err.value)
    assert "results.json" in msg and "questions.json" in msg and "another gold" in msg
    assert snapshot(out) == site_before, "a refused build must leave the old site as it was"
    assert leftovers(root, out) == []

    fresh = tmp_path / "fresh-site"
    with pytest.raises(GabaritoError):
        build(root, out=fresh, renderer="smalldocs")
    assert not fresh.exists()


def test_fixture_refuses_gold_edited_after_freeze(tmp_path):
    root = make_fixture(tmp_path / "proj")
    edit_question(root / "case-studies" / "demo" / "questions.json")
    out = tmp_path / "site"
    with pytest.raises(GabaritoError, match="gold changed after it was frozen"):
        build(root, out=out, renderer="smalldocs")
    assert not out.exists()


def test_fixture_refuses_results_without_provenance(tmp_path):
    root = make_fixture(tmp_path / "proj")
    results = root / "case-studies" / "demo" / "results.json"
    data = json.loads(results.read_text(encoding="utf-8"))
    del data["provenance"]
    write_measurement(results, data)  # a run that wrote no provenance
    out = tmp_path / "site"
    with pytest.raises(GabaritoError, match="provenance.gold_sha256"):
        build(root, out=out, renderer="smalldocs")
    assert not out.exists()


def test_fixture_failing_cell_leaves_no_site(tmp_path):
    cells = FIXTURE_NOTEBOOK[:2] + [("code", "raise RuntimeError('boom')")]
    root = make_fixture(tmp_path / "proj", notebook=cells)
    out = tmp_path / "site"
    with pytest.raises(GabaritoError, match=r"benchmark_rrf\.ipynb.*boom"):
        build(root, out=out, renderer="smalldocs")
    assert not out.exists()
    assert leftovers(root, out) == []


def test_fixture_mermaid_needs_a_cdn_in_smalldocs(tmp_path):
    """smalldocs turns ```{mermaid} into <pre class="mermaid"> and imports mermaid from jsdelivr: refused."""
    root = make_fixture(tmp_path / "proj")
    index = root / "index.qmd"
    index.write_text(index.read_text(encoding="utf-8") + "\n```{mermaid}\nflowchart LR\n  A --> B\n```\n", encoding="utf-8")
    out = tmp_path / "site"
    with pytest.raises(GabaritoError, match="mermaid"):
        build(root, out=out, renderer="smalldocs", execute=False)
    assert not out.exists()


def test_fixture_quarto_renderer_is_called_on_the_staged_project(tmp_path, monkeypatch):
    """Where quarto is on the PATH it renders the staged project, notebooks already run: checked with a stand-in."""
    import sys

    root = make_fixture(tmp_path / "proj")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "quarto-calls.txt"
    fake = bindir / "quarto"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"open({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "from smalldocs.site import build\n"
        "build(sys.argv[2], quiet=True)\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    out = tmp_path / "site"
    build(root, out=out)  # auto: quarto, since it is on the PATH
    args = calls.read_text(encoding="utf-8").split()
    assert args[0] == "render" and args[2] == "--no-execute" and "stage-" in args[1]
    page = (out / PAGE).read_text(encoding="utf-8")
    assert FIGURE_MARKER in page and 'site_libs/plotly/plotly.min.js' in page
    assert tbody_rows(page, "per-question") == 40
    assert "<figcaption" not in page, "numbering and captions are Quarto's own job on this path"
    assert "@fig-posicoes" in page  # left for Quarto to resolve, not rewritten
    assert "site_libs/gabarito/search-index.js" in page  # the site's own additions, under either renderer
    assert "go.Figure" not in page  # the staged cells say echo: false for Quarto too


def test_fixture_quarto_path_never_writes_the_working_tree(tmp_path, monkeypatch):
    """A stand-in quarto that, like the real one, edits .gitignore and writes into the notebooks it renders."""
    import sys

    root = make_fixture(tmp_path / "proj")
    (root / ".gitignore").write_text("_site/\n", encoding="utf-8")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "quarto"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import pathlib, sys\n"
        "stage = pathlib.Path(sys.argv[2])\n"
        "(stage / '.gitignore').open('a').write('/.quarto/\\n**/*.quarto_ipynb\\n')\n"
        "for nb in stage.rglob('*.ipynb'):\n"
        "    nb.write_text(nb.read_text() + ' ')\n"
        "from smalldocs.site import build\n"
        "build(sys.argv[2], quiet=True)\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    before = snapshot(root)
    build(root, out=tmp_path / "site", renderer="quarto")
    after = {k: v for k, v in snapshot(root).items() if not k.startswith(".cache/")}
    assert after == {k: v for k, v in before.items() if not k.startswith(".cache/")}


def test_fixture_refuses_unescaped_markup(tmp_path):
    cells = FIXTURE_NOTEBOOK[:2] + [("code", "from IPython.display import Markdown, display\n"
                                             "display(Markdown('query text = <title> (upper case)'))")]
    root = make_fixture(tmp_path / "proj", notebook=cells)
    out = tmp_path / "site"
    with pytest.raises(GabaritoError, match="not HTML"):
        build(root, out=out, renderer="smalldocs")
    assert not out.exists()


# --- the repository's own site -------------------------------------------------------------------

def copy_project(dest: Path) -> Path:
    """What the build reads: the config, the pages and the studies (no venv, VCS or caches)."""
    dest.mkdir(parents=True)
    for name in ("_quarto.yml", "index.ipynb"):
        shutil.copy(REPO / name, dest / name)
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    for name in ("notebooks", "case-studies", "data"):
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, dest / name, ignore=ignore)
    return dest


def test_real_site(real_site):
    """The repository's own site: the chapter's charts draw, its table has the 40 questions, all offline."""
    require_chromium()
    out = real_site
    visit = open_page(out, PAGE)
    assert '<svg class="main-svg"' in visit.dom, "no plotly chart drew on the chapter page"
    assert tbody_rows(visit.dom, "per-question") == 40
    assert_offline(out, visit)
    index = open_page(out, "index.html")
    assert 'href="notebooks/benchmark_rrf.html"' in index.dom
    assert index.external_requests == [] and index.missing == []
    # the evaluate chapter: its charts draw and its spreadsheet has one row per held-out query
    held_out = json.loads((REPO / "data" / "helpcenter" / "evaluation.heldout.json").read_text(encoding="utf-8"))
    chapter = open_page(out, "notebooks/avalie_sua_busca.html")
    assert '<svg class="main-svg"' in chapter.dom
    assert tbody_rows(chapter.dom, "spreadsheet") == len(held_out)
    assert_offline(out, chapter)


def test_real_project_refuses_a_question_edited_after_freezing(tmp_path):
    root = copy_project(tmp_path / "proj")
    edit_question(root / "case-studies" / "benchmark_rrf" / "questions.json")
    out = root / "_site"
    with pytest.raises(GabaritoError, match="questions.json"):
        build(root, renderer="smalldocs", allow_dirty=True)
    assert not out.exists()


def test_real_project_refuses_results_of_another_gold(tmp_path):
    root = copy_project(tmp_path / "proj")
    study = root / "case-studies" / "benchmark_rrf"
    assert (study / "results.json").is_file(), "the study has not written results.json yet"
    lock = json.loads((study / "gold.lock.json").read_text(encoding="utf-8"))
    edit_question(study / "questions.json")
    freeze(study / "gold.lock.json", [study / rel for rel in lock["files"]], note="frozen again")
    out = root / "_site"
    with pytest.raises(GabaritoError) as err:
        build(root, renderer="smalldocs", allow_dirty=True)
    # the first results file of the study read on that gold is named (results.json or a variant's)
    assert "benchmark_rrf/" in str(err.value) and ".json: results were computed against another gold" in str(err.value)
    assert "questions.json" in str(err.value)
    assert not out.exists()


def test_real_project_refuses_dirty_results_unless_told(tmp_path, monkeypatch):
    """Results computed on a tree with uncommitted changes stop the build, before any page runs."""
    root = copy_project(tmp_path / "proj")
    results = root / "case-studies" / "benchmark_rrf" / "results.json"
    data = json.loads(results.read_text(encoding="utf-8"))
    data["provenance"]["git"]["dirty"] = True
    write_results(results, data)  # a run on a dirty tree wrote (and recorded) it
    monkeypatch.delenv("GABARITO_ALLOW_DIRTY", raising=False)
    with pytest.raises(GabaritoError, match="uncommitted changes"):
        build(root, renderer="smalldocs", execute=False)
    assert not (root / "_site").exists()
