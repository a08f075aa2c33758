"""The book's style on built pages (issue 44 items 1 and 3): every page of the real site passes
:func:`gabarito.publish.style.page_violations`, and a page built by the ``gabarito site`` command
shows the generated Portuguese as the library writes it, or fails the check when it does not.

Integration: the site is built (notebooks executed in a kernel).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.publish.style import page_violations, visible_text
from test_site import FIXTURE_NOTEBOOK, make_fixture

pytestmark = pytest.mark.integration

PAGE = "notebooks/benchmark_rrf.html"


def test_every_page_of_the_real_site_keeps_the_book_style(real_site):
    """Issue 44: 152 hyphens as minus, four interval formats, "(p 1,000)", zero counts, nested
    parentheses, file and package names, all on the built pages."""
    pages = sorted(real_site.rglob("*.html"))
    assert len(pages) >= 8, pages
    found = [f"{page.relative_to(real_site)}: {v}" for page in pages
             for v in page_violations(page.read_text(encoding="utf-8"))]
    assert found == [], f"{len(found)} style violations:\n" + "\n".join(found[:60])


# --- through the command ------------------------------------------------------------------------

STYLED = ("code", """from IPython.display import HTML, Markdown, display
from gabarito.publish import formatting as fmt, labels, rawtext
from gabarito.publish.verdicts import p_text
display(Markdown(
    f"A fusão perde por {fmt.estimate(-0.225, [-0.4, -0.05], shown=fmt.signed)} ({p_text(1.0)}); "
    f"{labels.after('em', 'study', 'helpcenter')} melhora em {fmt.count(0, 'f')} e piora em {fmt.count(8, 'f')} das 9; "
    f"{labels.after('em', 'study', 'standard_collections')}, com {labels.method('hybrid')}."))
display(HTML(rawtext.protocol_html("# Question-writing protocol: name only\\n\\n## What you receive\\n- a *name*")))
""")
OLD_STYLE = ("code", """from IPython.display import Markdown, display
display(Markdown("A fusão perde por −0,225 [-0,400; -0,050] (p 1,000); melhora 0 e piora 8 das 9; "
                 "(Fusão RRF (denso + BM25)), lido de ../standard_collections/qrels/adi.txt."))
""")


def _site(tmp_path: Path, cell) -> subprocess.CompletedProcess:
    root = make_fixture(tmp_path / "proj", notebook=[*FIXTURE_NOTEBOOK, cell])
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "gabarito.cli", "site", "--root", str(root), "--out",
                           str(tmp_path / "site"), "--renderer", "smalldocs"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def test_cli_site_writes_the_generated_portuguese_in_the_book_style(tmp_path):
    proc = _site(tmp_path, STYLED)
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (tmp_path / "site" / PAGE).read_text(encoding="utf-8")
    text = visible_text(html)
    assert "\u22120,225 (IC 95%: \u22120,400 a \u22120,050) (p = 1,000)" in text, text[-1500:]
    assert "na central de ajuda melhora em nenhuma e piora em 8 das 9" in text
    assert "nas coleções clássicas, com Fusão RRF de denso e BM25" in text
    assert "<strong>Question-writing protocol: name only</strong>" in html and "<em>name</em>" in html
    assert "# Question-writing" not in text
    assert page_violations(html) == []


def test_cli_site_page_in_the_old_style_fails_the_check(tmp_path):
    """The check is not vacuous on a page the command built: each pattern the readers found."""
    proc = _site(tmp_path, OLD_STYLE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = page_violations((tmp_path / "site" / PAGE).read_text(encoding="utf-8"))
    assert {v.rule for v in found} >= {"minus", "interval", "p", "zero", "parentheses", "path"}, found
