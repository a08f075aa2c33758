"""The whole report as one download (issue 43, item 1): the archive of the built commit, its sum, and
the "Reproduzir" block that names it.

The functions are tested on a small git project made here; ``test_cli_*`` drive ``gabarito site``
on it in a subprocess (they start a Jupyter kernel: integration).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import nbformat
import pytest

from gabarito.errors import GabaritoError
from gabarito.publish.reproduce import fill, fill_pages, reproduce_block
from gabarito.publish.source_archive import (COMMIT_FILE, MIRROR_EXAMPLE, SourceArchive, add_source_archive,
                                             archive_commit, source_of)

REPO = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
GIT_ENV = {"GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"}

QUARTO = """project:
  type: website
  output-dir: _site
  render:
    - index.qmd
    - notebooks/*.ipynb
website:
  title: "demo"
  navbar:
    left:
      - href: index.qmd
        text: Início
      - href: notebooks/cap.ipynb
        text: Capítulo
format:
  html:
    lang: pt-BR
    theme: default
    code-fold: true
    code-summary: "Mostrar código"
"""


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run([*GIT, "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def make_project(root: Path) -> str:
    """A git project with a site: a home page and one chapter whose Reproduzir is the library's
    block; returns its commit."""
    (root / "notebooks").mkdir(parents=True)
    (root / "_quarto.yml").write_text(QUARTO, encoding="utf-8")
    (root / "index.qmd").write_text("---\ntitle: \"demo\"\n---\n\nO [capítulo](notebooks/cap.ipynb).\n", encoding="utf-8")
    (root / "Makefile").write_text("report:\n\techo report\n", encoding="utf-8")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_raw_cell("---\ntitle: \"Capítulo\"\n---"),
                nbformat.v4.new_markdown_cell("## Reproduzir"),
                nbformat.v4.new_code_cell("from IPython.display import HTML, display\n"
                                          "from gabarito.publish.reproduce import reproduce_block\n"
                                          "display(HTML(reproduce_block()))")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(root / "notebooks" / "cap.ipynb"))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "demo")
    (root / "untracked.txt").write_text("not in the archive\n", encoding="utf-8")
    return git(root, "rev-parse", "HEAD")


def members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}


def sha256sum_check(sums: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["sha256sum", "-c", sums.name], cwd=sums.parent, capture_output=True, text=True)


# --- the archive -----------------------------------------------------------------------------------

def test_the_archive_is_the_tracked_tree_at_the_commit_with_its_sum(tmp_path):
    root = tmp_path / "proj"
    commit = make_project(root)
    (root / "Makefile").write_text("report:\n\techo changed, not committed\n", encoding="utf-8")
    source = add_source_archive(root, tmp_path / "downloads")
    assert (source.commit, source.origin, source.dirty, source.offered) == (commit, "git", True, True)
    archive = tmp_path / "downloads" / "fonte" / f"gabarito-{commit[:12]}.tar.gz"
    assert archive.is_file() and source.name == archive.name
    got = members(archive)
    top = f"gabarito-{commit[:12]}"
    tracked = git(root, "ls-files").split("\n")
    assert sorted(got) == sorted([f"{top}/{p}" for p in tracked] + [f"{top}/{COMMIT_FILE}"])
    assert got[f"{top}/{COMMIT_FILE}"].decode().strip() == commit
    with tarfile.open(archive, "r:gz") as tar:  # a checkout's modes, not git's default 0664
        assert {oct(m.mode) for m in tar if m.isfile()} == {"0o644"}
    assert b"not committed" not in got[f"{top}/Makefile"], "the archive is the commit, not the tree"
    assert sha256sum_check(archive.with_name(archive.name + ".sha256")).returncode == 0
    # the same commit gives the same bytes (the archive's times are the commit's)
    again = add_source_archive(root, tmp_path / "again")
    assert (tmp_path / "again" / "fonte" / archive.name).read_bytes() == archive.read_bytes()
    assert again.offered


def test_an_unpacked_tree_names_its_archive_and_offers_it_only_when_beside(tmp_path):
    root = tmp_path / "proj"
    commit = make_project(root)
    archive = add_source_archive(root, tmp_path / "downloads")
    built = tmp_path / "downloads" / "fonte" / archive.name
    reader = tmp_path / "reader"
    reader.mkdir()
    shutil.copy(built, reader / built.name)
    with tarfile.open(reader / built.name, "r:gz") as tar:
        tar.extractall(reader, filter="data")
    tree = reader / archive.folder
    assert source_of(tree) == SourceArchive(commit, "archive")
    offered = add_source_archive(tree, tmp_path / "from-tree")
    assert offered.offered and offered.commit == commit
    assert (tmp_path / "from-tree" / "fonte" / built.name).read_bytes() == built.read_bytes()

    (reader / built.name).unlink()  # the archive is not beside the tree: named, not offered
    alone = add_source_archive(tree, tmp_path / "alone")
    assert (alone.commit, alone.offered) == (commit, False)
    assert not (tmp_path / "alone" / "fonte").exists()

    other = reader / built.name  # an archive of that name that is another commit's: not offered
    with tarfile.open(other, "w:gz") as tar:
        info = tarfile.TarInfo(f"{archive.folder}/{COMMIT_FILE}")
        data = ("0" * 40 + "\n").encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert archive_commit(other) == "0" * 40
    assert not add_source_archive(tree, tmp_path / "other").offered

    (tree / COMMIT_FILE).write_text("not a commit\n", encoding="utf-8")
    with pytest.raises(GabaritoError, match=COMMIT_FILE):
        source_of(tree)


def test_a_copy_with_neither_git_nor_archive_commit_has_no_archive(tmp_path):
    (tmp_path / "_quarto.yml").write_text(QUARTO, encoding="utf-8")
    source = add_source_archive(tmp_path, tmp_path / "downloads")
    assert source == SourceArchive(None, "none")
    assert not (tmp_path / "downloads").exists()


# --- the block -------------------------------------------------------------------------------------

def _block(tmp_path: Path) -> str:
    (tmp_path / "notebooks").mkdir(exist_ok=True)
    (tmp_path / "_quarto.yml").write_text(QUARTO, encoding="utf-8")
    return str(reproduce_block(tmp_path / "notebooks"))


def test_the_block_names_the_archive_the_build_offers(tmp_path):
    block = _block(tmp_path)
    assert "data-gabarito-slot" in block and "shared/datasets" not in block
    assert f"GABARITO_DATA_MIRROR={MIRROR_EXAMPLE} make report" in block and "data/datasets.json" in block
    commit = "0123456789abcdef" * 2 + "01234567"
    page = fill(block, SourceArchive(commit, "git", offered=True))
    assert "data-gabarito-slot" not in page
    assert '<a href="../downloads/fonte/gabarito-0123456789ab.tar.gz" download>' in page
    assert '<a href="../downloads/fonte/gabarito-0123456789ab.tar.gz.sha256" download>' in page
    assert re.search(r"sha256sum -c gabarito-0123456789ab\.tar\.gz\.sha256\ntar -xzf gabarito-0123456789ab\.tar\.gz\n"
                     r"cd gabarito-0123456789ab\nmake report", page)
    assert "Atenção" not in page
    # the commands show; what make report does and the mirror fold under them (the chapter's budget)
    assert page.index("make report</code></pre><details><summary>Detalhes") < page.index("GABARITO_DATA_MIRROR")

    dirty = fill(block, SourceArchive(commit, "git", dirty=True, offered=True))
    assert "mudanças ainda fora de um commit" in dirty and "<code>0123456789ab</code>" in dirty

    named = fill(block, SourceArchive(commit, "archive"))
    assert "<a href" not in named and "não está entre os arquivos para baixar" in named

    none = fill(block, SourceArchive(None, "none"))
    assert "<a href" not in none and "não oferece o arquivo" in none and "gabarito-&lt;commit&gt;.tar.gz" in none


def test_fill_pages_fills_every_page_and_refuses_an_unknown_slot(tmp_path):
    block = _block(tmp_path)
    site = tmp_path / "site"
    (site / "notebooks").mkdir(parents=True)
    (site / "notebooks" / "a.html").write_text(f"<html><body>{block}</body></html>", encoding="utf-8")
    (site / "index.html").write_text("<html><body>sem bloco</body></html>", encoding="utf-8")
    assert fill_pages(site, SourceArchive("a" * 40, "git", offered=True)) == 1
    assert "gabarito-aaaaaaaaaaaa.tar.gz" in (site / "notebooks" / "a.html").read_text(encoding="utf-8")
    (site / "b.html").write_text('<span data-gabarito-slot="other" data-href=""></span>', encoding="utf-8")
    with pytest.raises(GabaritoError, match="b.html"):
        fill_pages(site, SourceArchive("a" * 40, "git", offered=True))


# --- through the command ---------------------------------------------------------------------------

def site_cmd(root: Path, out: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "gabarito.cli", "site", "--root", str(root), "--out", str(out),
                           "--renderer", "smalldocs"], capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.integration
def test_cli_site_offers_the_archive_and_an_unpacked_tree_builds_the_same_page(tmp_path):
    root = tmp_path / "proj"
    commit = make_project(root)
    name = f"gabarito-{commit[:12]}.tar.gz"

    run = site_cmd(root, tmp_path / "site")
    assert run.returncode == 0, run.stderr
    assert f"site: source archive {name}\n" in run.stderr
    fonte = tmp_path / "site" / "downloads" / "fonte"
    assert sorted(p.name for p in fonte.iterdir()) == [name, name + ".sha256"]
    assert sha256sum_check(fonte / (name + ".sha256")).returncode == 0
    page = (tmp_path / "site" / "notebooks" / "cap.html").read_text(encoding="utf-8")
    assert f'<a href="../downloads/fonte/{name}" download>' in page and "data-gabarito-slot" not in page
    assert "mudanças ainda fora de um commit" not in page

    # the reader's way: the archive and its sum in a folder, checked, unpacked, built there
    reader = tmp_path / "reader"
    reader.mkdir()
    for p in fonte.iterdir():
        shutil.copy(p, reader / p.name)
    assert sha256sum_check(reader / (name + ".sha256")).returncode == 0
    subprocess.run(["tar", "-xzf", name], cwd=reader, check=True)
    tree = reader / name.removesuffix(".tar.gz")
    again = site_cmd(tree, tmp_path / "site2")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "site2" / "notebooks" / "cap.html").read_text(encoding="utf-8") == page
    assert (tmp_path / "site2" / "downloads" / "fonte" / name).read_bytes() == (fonte / name).read_bytes()
    assert not (tmp_path / "site2" / COMMIT_FILE).exists()

    # a tracked file changed and not committed: the archive is still the commit, and the page says so
    (root / "Makefile").write_text("report:\n\techo changed\n", encoding="utf-8")
    dirty = site_cmd(root, tmp_path / "site3")
    assert dirty.returncode == 0, dirty.stderr
    assert "the archive is the commit, not the tree" in dirty.stderr
    assert (tmp_path / "site3" / "downloads" / "fonte" / name).read_bytes() == (fonte / name).read_bytes()
    assert "mudanças ainda fora de um commit" in (tmp_path / "site3" / "notebooks" / "cap.html").read_text(encoding="utf-8")

    # the unpacked tree without its archive beside: named without a link, and the build says so
    (reader / name).unlink()
    alone = site_cmd(tree, tmp_path / "site4")
    assert alone.returncode == 0, alone.stderr
    assert "not beside the tree" in alone.stderr
    lone = (tmp_path / "site4" / "notebooks" / "cap.html").read_text(encoding="utf-8")
    assert f"../downloads/fonte/{name}" not in lone and "não está entre os arquivos para baixar" in lone
    assert not (tmp_path / "site4" / "downloads" / "fonte").exists()
