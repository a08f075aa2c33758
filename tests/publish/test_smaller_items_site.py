"""Issue 44's smaller items on built pages: the real site (``real_site``, one build per session)
and a page the ``gabarito site`` command builds from a fixture project (a pointer written by
:func:`gabarito.publish.pointers.details` and a section heading written by a cell's code, as the
fusion chapter's is). Integration: the notebooks run in a kernel."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.publish.style import page_violations, visible_text
from test_site import FIXTURE_NOTEBOOK, make_fixture
from test_smaller_items import LAPTOP

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def _downloads_problems(name: str, html: str) -> list[str]:
    block = re.search(r'<div class="gabarito-downloads">(.*?)</div>', html, re.S)
    if not block:
        return []
    out = []
    words = re.findall(r"<a [^>]*download>(.*?)</a>", block.group(1))
    if len(words) != len(set(words)):
        out.append(f"{name}: download links with the same words: {sorted({w for w in words if words.count(w) > 1})[:5]}")
    lists = [frozenset(re.findall(r'href="([^"]+)"', li)) for li in re.findall(r"<li>(.*?)</li>", block.group(1), re.S)]
    if len(lists) != len(set(lists)):
        out.append(f"{name}: two download lists of the same files")
    return out


def check_built_site(site: Path) -> list[str]:
    """What a built site still gets wrong of the smaller items (empty when nothing)."""
    problems = []
    for page in sorted(site.rglob("*.html")):
        if "downloads" in page.relative_to(site).parts:
            continue
        html, name = page.read_text(encoding="utf-8"), str(page.relative_to(site))
        text = visible_text(html)
        problems += [f"{name}: calls the machine {m.group(0)!r}" for m in LAPTOP.finditer(text)]
        problems += [f"{name}: {v}" for v in page_violations(html) if v.rule == "pointer"]
        if 'href="#detalhes"' in html and 'id="detalhes"' not in html:
            problems.append(f"{name}: links #detalhes but has no such section")
        problems += _downloads_problems(name, html)
    cost = visible_text((site / "notebooks" / "custo.html").read_text(encoding="utf-8"))
    measured = "e5" in json.loads((REPO / "case-studies" / "peers" / "encoders.json").read_text())["models"]
    if measured != ("multilingual-e5-small com pesos de 4 bits e aritmética de 32 bits" in cost
                    and "por mil documentos no ONNX Runtime" in cost):
        problems.append("custo: e5's cost per thousand documents shown = " + str(not measured))
    if not measured and "não foi medido nesta versão dos resultados" not in cost:
        problems.append("custo: does not say e5 was not measured")
    fusion = (site / "notebooks" / "fusao.html").read_text(encoding="utf-8")
    heading = re.search(r"<h2[^>]*id=\"[^\"]+\"[^>]*>\s*Uma ida ao banco contra (\w+)\s*</h2>|"
                        r"<section id=\"[^\"]+\"[^>]*>\s*<h2[^>]*>\s*Uma ida ao banco contra (\w+)", fusion)
    said = re.search(r"o caminho em Python faz em (\w+)", visible_text(fusion))
    if not heading or not said or (heading.group(1) or heading.group(2)) != said.group(1):
        problems.append(f"fusao: heading and text disagree ({heading and heading.group(0)!r}, {said and said.group(0)!r})")
    avalie = (site / "notebooks" / "avalie_sua_busca.html").read_text(encoding="utf-8")
    sums = site / "downloads" / "pacote" / "SHA256SUMS.html"
    if 'href="../downloads/pacote/SHA256SUMS.html"' not in avalie or not sums.is_file() \
            or 'name="viewport"' not in sums.read_text(encoding="utf-8"):
        problems.append("avalie: SHA256SUMS is not linked through its readable page")
    return problems


def test_the_real_site_keeps_the_smaller_items(real_site):
    assert check_built_site(real_site) == []


POINTER = ("code", """from IPython.display import Markdown, display
from gabarito.publish import formatting as fmt
from gabarito.publish.pointers import details
display(Markdown(f"## {fmt.in_words(1, 'f').capitalize()} ida contra {fmt.in_words(2, 'f')}\\n\\n"
                 f"A tabela completa está em {details()}."))
""")
DETAILS = ("markdown", "## Detalhes\n\nAs tabelas.")


def test_cli_site_links_the_pointer_and_titles_a_section_from_code(tmp_path):
    root = make_fixture(tmp_path / "proj", notebook=[*FIXTURE_NOTEBOOK, POINTER, DETAILS])
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "gabarito.cli", "site", "--root", str(root), "--out",
                           str(tmp_path / "site"), "--renderer", "smalldocs"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (tmp_path / "site" / "notebooks" / "benchmark_rrf.html").read_text(encoding="utf-8")
    assert re.search(r'<a href="#detalhes">Detalhes</a>', html) and 'id="detalhes"' in html
    assert re.search(r'id="uma-ida-contra-duas"', html), "a heading written by a cell gets its id"
    assert re.search(r'href="#uma-ida-contra-duas"', html), "and its entry in the page's contents"
    assert [v for v in page_violations(html) if v.rule == "pointer"] == []
