"""``gabarito site`` shows code only where it teaches, and its search finds what the pages hold.

Integration tests: each builds the small project of ``test_site.make_fixture`` through the command
itself (a Jupyter kernel runs the notebook).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.publish.site.search import SEARCH_INDEX

from test_site import FIXTURE_NOTEBOOK, PAGE, make_fixture

pytestmark = pytest.mark.integration

REPRODUZIR = [
    ("markdown", "## Reproduzir\n\nNuma pasta vazia:\n\n```bash\npip install gabarito-demo\n```"),
    ("code", "#| echo: true\nprint('o programa que o leitor roda')"),
]


def gabarito_site(root: Path, out: str = "site") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gabarito.cli", "site", "--root", str(root), "--out", out,
                           "--renderer", "smalldocs"], capture_output=True, text=True, timeout=600)


def test_site_hides_code_but_where_it_teaches_and_indexes_whole_sections(tmp_path):
    root = make_fixture(tmp_path / "proj", notebook=FIXTURE_NOTEBOOK + REPRODUZIR)
    proc = gabarito_site(root)
    assert proc.returncode == 0, proc.stderr
    page = (root / "site" / PAGE).read_text(encoding="utf-8")
    assert 'class="code-fold"' not in page and "Mostrar código" not in page  # no toggle at all
    assert "go.Figure" not in page and "display(HTML" not in page  # the chart's and the table's code hidden
    assert page.count("cell-code") == 1  # the one cell that teaches, shown unfolded
    shown = page.index("o programa que o leitor roda")
    assert page.index('id="reproduzir"') < shown
    text = (root / "site" / SEARCH_INDEX).read_text(encoding="utf-8")
    entries = json.loads(text[len("window.GABARITO_SEARCH = "):].rstrip().rstrip(";"))
    repro = [e for e in entries if e["section"] == "Reproduzir"]
    assert repro and repro[0]["href"] == f"{PAGE}#reproduzir"
    assert "pip install gabarito-demo" in repro[0]["text"] and "install" in repro[0]["terms"].split()


def test_site_refuses_code_shown_outside_the_sections_that_teach(tmp_path):
    cells = FIXTURE_NOTEBOOK + [("code", "#| echo: true\nprint('fora do lugar')")]
    root = make_fixture(tmp_path / "proj", notebook=cells)
    proc = gabarito_site(root)
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if not ln.startswith("site: ")]  # the build's progress lines aside
    assert errors == lines[-1:] and "Traceback" not in proc.stderr, proc.stderr
    assert re.fullmatch(rf"gabarito: error: notebooks/benchmark_rrf\.ipynb: cell {len(cells) - 1} shows its code under "
                        r"'Resultados': code shows only in the sections that teach \(Instale e rode, O mecanismo "
                        r"mínimo, Reproduzir\); drop its echo/code-fold option", errors[0]), errors[0]
    assert not (root / "site").exists()
    assert not list((root / ".cache" / "site").glob("stage-*"))
