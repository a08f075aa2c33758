"""The tool in the reader's hands: the project's wheel, its source archive and an example to run.

The site's build puts, under ``downloads/``:

* ``pacote/gabarito-<version>-py3-none-any.whl`` and ``pacote/gabarito-<version>.tar.gz`` (the
  Python package's source; the whole report, tree and all, is :mod:`gabarito.publish.source_archive`),
  built offline from the files git tracks (never from the working tree's untracked files) by
  setuptools' own build backend, with ``SOURCE_DATE_EPOCH`` set to the last commit's time so the
  archives' timestamps do not depend on the build's date; ``pacote/SHA256SUMS`` holds their
  sha256 in the format ``sha256sum -c`` reads, and ``pacote/SHA256SUMS.html`` the same sums as a page a
  phone reads (:mod:`gabarito.publish.sums_page`), which pages link;
* ``exemplo/documentos.json`` (the help-center documents as ``[{"id", "title", "text"}]``, read by
  the same loader as ``gabarito evaluate --documents``) and ``exemplo/perguntas.json`` (their
  frozen evaluation file): what the evaluate chapter's "Instale e rode" runs.

:func:`download_names` gives those paths (relative to ``downloads/``) for a page to link.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.publish.sums_page import write_sums_page

#: What a source tree needs to build the package (the rest of the repository is not packaged).
PACKAGE_INPUTS = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "gabarito", "case-studies")
#: The example the evaluate chapter runs: the help-center documents and their evaluation file.
EXAMPLE_DOCUMENTS = PurePosixPath("data/helpcenter/docs")
EXAMPLE_EVALUATION = PurePosixPath("data/helpcenter/evaluation.json")

_BUILD = """
import sys
from setuptools import build_meta
out = sys.argv[1]
print(build_meta.build_wheel(out))
print(build_meta.build_sdist(out))
"""


def package_version(root: str | Path) -> str:
    """The version in ``pyproject.toml``'s ``[project]`` table (what the wheel's name carries)."""
    import re

    path = Path(root) / "pyproject.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GabaritoError("no pyproject.toml", path=path) from None
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    version = project and re.search(r'^version\s*=\s*"([^"]+)"', project.group(1), re.M)
    if not version:
        raise GabaritoError("no version in the [project] table", path=path)
    return version.group(1)


def download_names(version: str) -> dict[str, str]:
    """The downloads a page links, relative to the site's ``downloads/`` folder."""
    return {
        "wheel": f"pacote/gabarito-{version}-py3-none-any.whl",
        "sdist": f"pacote/gabarito-{version}.tar.gz",
        "sums": "pacote/SHA256SUMS",
        "sums_page": "pacote/SHA256SUMS.html",
        "documents": "exemplo/documentos.json",
        "evaluation": "exemplo/perguntas.json",
    }


def sum_lines(paths: list[Path]) -> str:
    """Each file's sha256 and name, one line each, in the format ``sha256sum -c`` reads."""
    return "".join(f"{sha256_file(p)}  {p.name}\n" for p in paths)


def _tracked(root: Path) -> list[Path] | None:
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", *PACKAGE_INPUTS], cwd=root, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return [root / p for p in out.stdout.decode().split("\0") if p]


def _source_copy(root: Path, dest: Path) -> None:
    files = _tracked(root)
    if files is None:  # not a git checkout (an unpacked source archive): its files are the source
        files = [p for name in PACKAGE_INPUTS for p in ([root / name] if (root / name).is_file()
                 else sorted((root / name).rglob("*")) if (root / name).is_dir() else [])]
    for f in files:
        if f.is_file() and "__pycache__" not in f.parts and not f.name.endswith(".pyc"):
            target = dest / f.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)
            # the modes a checkout under umask 022 has, whatever this tree's umask or tar gave it:
            # the wheel records them, and two trees of one commit must give the same wheel
            os.chmod(target, 0o755 if f.stat().st_mode & 0o111 else 0o644)


def _commit_time(root: Path) -> str | None:
    """The last commit's time; in a tree unpacked from the report's archive (no git), the time its
    files carry (``git archive`` gives every file the commit's time)."""
    from gabarito.publish.source_archive import COMMIT_FILE, source_of

    try:
        out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=root, capture_output=True, text=True, check=True)
        return out.stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        pass
    if source_of(root).origin == "archive":
        return str(int((Path(root) / COMMIT_FILE).stat().st_mtime))
    return None


def build_packages(root: str | Path, dest: str | Path) -> dict[str, Path]:
    """Build the wheel and the source archive of the project at ``root`` into ``dest`` and write
    ``SHA256SUMS`` and its readable page beside them; returns ``{"wheel", "sdist", "sums",
    "sums_page"}``. Offline: setuptools' backend from this interpreter, no isolated environment, no index."""
    root, dest = Path(root).resolve(), Path(dest)
    version = package_version(root)
    names = download_names(version)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gabarito-package-") as tmp:
        src, out = Path(tmp) / "src", Path(tmp) / "dist"
        _source_copy(root, src)
        env = dict(os.environ)
        stamp = _commit_time(root)
        if stamp:
            env["SOURCE_DATE_EPOCH"] = stamp
        run = subprocess.run([sys.executable, "-c", _BUILD, str(out)], cwd=src, env=env, capture_output=True, text=True)
        if run.returncode != 0:
            tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no output"]
            raise GabaritoError(f"building the package failed: {tail[0]}", path=root / "pyproject.toml")
        built = {}
        for key in ("wheel", "sdist"):
            name = PurePosixPath(names[key]).name
            if not (out / name).is_file():
                raise GabaritoError(f"the build wrote no {name}", path=root / "pyproject.toml")
            built[key] = dest / name
            shutil.copyfile(out / name, built[key])
    sums = dest / PurePosixPath(names["sums"]).name
    sums.write_text(sum_lines([built["wheel"], built["sdist"]]), encoding="utf-8")
    built["sums"] = sums
    built["sums_page"] = write_sums_page(sums)
    return built


def write_example(root: str | Path, dest: str | Path) -> dict[str, Path]:
    """The help-center example as two files a reader downloads: ``documentos.json`` and
    ``perguntas.json``. Returns ``{"documents", "evaluation"}``."""
    from gabarito.inputs.documents import load_documents

    root, dest = Path(root), Path(dest)
    docs = load_documents(root / EXAMPLE_DOCUMENTS)
    dest.mkdir(parents=True, exist_ok=True)
    names = download_names("")
    out = {"documents": dest / PurePosixPath(names["documents"]).name,
           "evaluation": dest / PurePosixPath(names["evaluation"]).name}
    out["documents"].write_text(json.dumps([{"id": d.id, "title": d.title, "text": d.text} for d in docs],
                                           ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    shutil.copyfile(root / EXAMPLE_EVALUATION, out["evaluation"])
    return out


def add_package_downloads(root: str | Path, site: str | Path) -> int:
    """Put the package and the example under ``site/downloads/`` when ``root`` is a Python project
    holding the example; returns how many files (0 for a project that is neither)."""
    root, downloads = Path(root), Path(site) / "downloads"
    n = 0
    if (root / "pyproject.toml").is_file() and (root / "setup.py").is_file():
        n += len(build_packages(root, downloads / "pacote"))
    if (root / EXAMPLE_DOCUMENTS).is_dir() and (root / EXAMPLE_EVALUATION).is_file():
        n += len(write_example(root, downloads / "exemplo"))
    return n
