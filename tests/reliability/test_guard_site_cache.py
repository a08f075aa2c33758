"""Issue 39 through `gabarito site`: the executed-notebook cache is checked by content (F9), and a
page's temporary files do not outlive its build (F29).

Both build the small site project of tests/publish/test_site.py and run its notebook in a Jupyter
kernel: integration tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_reliability_cli_site import site_project

REPO = Path(__file__).resolve().parents[2]
#: A cell like the real page's (avalie_sua_busca): a working folder of its own under the temporary folder.
TEMP_CELL = ("code", "import os, tempfile\nos.chdir(tempfile.mkdtemp(prefix='gabarito-exemplo-'))\n"
                     "open('documentos.json', 'w').write('[]')")


def build(root: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "TMPDIR": str(tmp), "GABARITO_CACHE_DIR": str(root / ".cache")}
    return subprocess.run([sys.executable, "-m", "gabarito.cli", "site", "--root", str(root), "--renderer",
                           "smalldocs", *args], cwd=root, env=env, capture_output=True, text=True, timeout=600)


def page(root: Path) -> str:
    return (root / "_site" / "notebooks" / "benchmark_rrf.html").read_text(encoding="utf-8")


@pytest.mark.integration
def test_site_leaves_no_temporary_folder_of_a_page_and_refuses_an_edited_cached_page(tmp_path):
    import nbformat

    import shutil

    root = site_project(tmp_path / "proj", sleep=False)
    # the package the pages' cache is keyed on, frozen for the test (not the working tree being edited)
    shutil.copytree(REPO / "gabarito", root / "gabarito", ignore=shutil.ignore_patterns("__pycache__"))
    nb_path = root / "notebooks" / "benchmark_rrf.ipynb"
    nb = nbformat.read(str(nb_path), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(TEMP_CELL[1]))
    nbformat.write(nb, str(nb_path))
    tmp = tmp_path / "tmp"
    tmp.mkdir()

    first = build(root, tmp)
    assert first.returncode == 0, first.stderr
    # F29: every build left a gabarito-exemplo-* folder in the temporary directory
    assert sorted(p.name for p in tmp.iterdir()) == [], "a page's temporary files outlived the build"
    assert "<td>q01</td>" in page(root)

    # F9: the executed copy in .cache/site was trusted without checking its content
    cached = root / ".cache" / "site" / "executed" / "notebooks" / "benchmark_rrf.ipynb"
    text = cached.read_text(encoding="utf-8")
    assert "<td>q01</td>" in text
    cached.write_text(text.replace("<td>q01</td>", "<td>ADULTERADO</td>"), encoding="utf-8")
    again = build(root, tmp, "--no-execute")
    assert again.returncode == 0, again.stderr
    assert "not the ones the last build wrote" in again.stderr
    assert "ADULTERADO" not in page(root)
    rerun = build(root, tmp)
    assert rerun.returncode == 0 and "ADULTERADO" not in page(root) and "<td>q01</td>" in page(root)
    assert sorted(p.name for p in tmp.iterdir()) == []
