"""The package and the example the site offers, built from a small project (no network, no git)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.publish.packages import add_package_downloads, build_packages, download_names, package_version, write_example

PYPROJECT = """[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "gabarito"
version = "9.8.7"

[tool.other]
version = "0.0.0"
"""


def _project(root: Path) -> Path:
    (root / "gabarito").mkdir(parents=True)
    (root / "gabarito" / "__init__.py").write_text("X = 1\n")
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "setup.py").write_text("from setuptools import setup\nsetup(packages=['gabarito'])\n")
    (root / "README.md").write_text("readme\n")
    (root / "notes.txt").write_text("not packaged\n")
    return root


def test_version_is_read_from_the_project_table(tmp_path):
    assert package_version(_project(tmp_path)) == "9.8.7"
    (tmp_path / "pyproject.toml").write_text("[tool.x]\nversion = \"1\"\n")
    with pytest.raises(GabaritoError, match="no version"):
        package_version(tmp_path)


def test_wheel_and_source_archive_with_their_sha256(tmp_path):
    root = _project(tmp_path / "p")
    built = build_packages(root, tmp_path / "out")
    names = download_names("9.8.7")
    assert built["wheel"].name == Path(names["wheel"]).name and built["sdist"].name == Path(names["sdist"]).name
    with zipfile.ZipFile(built["wheel"]) as z:
        assert "gabarito/__init__.py" in z.namelist()
        assert not any(n.endswith("notes.txt") for n in z.namelist())
    lines = built["sums"].read_text().splitlines()
    assert lines == [f"{sha256_file(built[k])}  {built[k].name}" for k in ("wheel", "sdist")]
    assert not (root / "build").exists() and not list(root.glob("*.egg-info"))  # the project is not touched


def test_a_broken_project_is_one_line_and_nothing_written(tmp_path):
    root = _project(tmp_path / "p")
    (root / "setup.py").write_text("raise SystemExit('broken setup')\n")
    with pytest.raises(GabaritoError, match="building the package failed"):
        build_packages(root, tmp_path / "out")
    assert not list((tmp_path / "out").glob("*.whl"))


def test_example_is_the_loader_view_of_the_documents(tmp_path):
    root = tmp_path / "p"
    docs = root / "data" / "helpcenter" / "docs"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text("# Título A\n\nTexto.\n")
    (root / "data" / "helpcenter" / "evaluation.json").write_text('[{"query": "q", "relevantIds": ["a"]}]')
    out = write_example(root, tmp_path / "ex")
    assert json.loads(out["documents"].read_text()) == [{"id": "a", "title": "Título A", "text": "# Título A\n\nTexto.\n"}]
    assert json.loads(out["evaluation"].read_text())[0]["relevantIds"] == ["a"]


def test_a_project_without_package_or_example_adds_nothing(tmp_path):
    assert add_package_downloads(tmp_path, tmp_path / "site") == 0
    assert not (tmp_path / "site").exists()
