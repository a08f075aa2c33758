"""The site project: ``_quarto.yml``, its pages, and the staging copy a renderer works in."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath

from gabarito.errors import GabaritoError
from gabarito.publish.source_archive import is_git_top

#: Folders never copied into the staging project.
SKIP_DIRS = frozenset({
    ".git", ".venv", "venv", ".cache", ".quarto", "node_modules", "__pycache__", ".pytest_cache",
    ".ipynb_checkpoints", ".mypy_cache", ".ruff_cache", ".tox",
})
#: Top-level folders that hold code and data, never pages: not staged (their files reach the
#: site only as downloads, which the build copies itself).
NOT_PAGES = frozenset({"case-studies", "data", "gabarito", "tests", "scripts", ".ci", ".github"})


def load_config(root: Path) -> dict:
    """Read ``_quarto.yml``."""
    import yaml

    path = Path(root) / "_quarto.yml"
    try:
        cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GabaritoError("no _quarto.yml: not a site project", path=root) from None
    except yaml.YAMLError as exc:
        raise GabaritoError(f"invalid YAML: {' '.join(str(exc).split())}", path=path) from None
    if not isinstance(cfg, dict) or not isinstance(cfg.get("project") or {}, dict):
        raise GabaritoError("expected a mapping with a 'project' section", path=path)
    return cfg


def _as_list(value) -> list:
    return [] if value is None else value if isinstance(value, list) else [value]


def render_list(root: Path, cfg: dict) -> list[PurePosixPath]:
    """The pages of ``project.render``, globs expanded (``!pattern`` removes), in order."""
    keep: list[PurePosixPath] = []
    drop: set[PurePosixPath] = set()
    for entry in _as_list((cfg.get("project") or {}).get("render")):
        pattern = str(entry)
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").lstrip("/")
        found = sorted(PurePosixPath(p.relative_to(root).as_posix()) for p in Path(root).glob(pattern) if p.is_file())
        if negate:
            drop.update(found)
        else:
            keep += [f for f in found if f not in keep]
    return [f for f in keep if f not in drop]


def notebooks_to_run(root: Path, cfg: dict) -> list[PurePosixPath]:
    return [p for p in render_list(root, cfg) if p.suffix == ".ipynb"]


def html_options(cfg: dict) -> dict:
    fmt = cfg.get("format")
    opts = fmt.get("html") if isinstance(fmt, dict) else None
    return opts if isinstance(opts, dict) else {}


def page_title(path: Path) -> str | None:
    """The ``title`` of a page's front matter (a notebook's first raw or Markdown cell, or a ``.qmd``'s
    head), or ``None``: what Quarto and smalldocs show for a navbar entry that has no ``text``."""
    import yaml

    try:
        if path.suffix == ".ipynb":
            import json

            cells = json.loads(path.read_text(encoding="utf-8")).get("cells") or []
            head = "".join(cells[0].get("source") or "") if cells else ""
        else:
            head = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    m = re.match(r"\s*---\s*\n(.*?)\n---", head, re.S)
    try:
        meta = yaml.safe_load(m.group(1)) if m else None
    except yaml.YAMLError:
        return None
    title = meta.get("title") if isinstance(meta, dict) else None
    return str(title) if title else None


def _nav_entries(items, root: Path | None) -> list[tuple[str, str]]:
    out = []
    for item in _as_list(items):
        if isinstance(item, str):
            item = {"href": item}
        if not isinstance(item, dict):
            continue
        if item.get("menu"):
            out += _nav_entries(item["menu"], root)
        elif item.get("href"):
            href = str(item["href"])
            title = item.get("text") or (page_title(Path(root) / href) if root else None)
            out.append((href, str(title or href)))
    return out


def navigation(cfg: dict, root: Path | None = None) -> list[tuple[str, str]]:
    """The navbar's pages in order, menus included, as ``(source path, text)``: the order of previous
    and next. An entry without ``text`` is named by its page's title (read under ``root``), as the
    renderers name it; the home page (\"Início\") comes first when the navbar does not list it."""
    navbar = (cfg.get("website") or {}).get("navbar") or {}
    out = [e for side in ("left", "right") for e in _nav_entries(navbar.get(side), root)]
    if root is not None and out:
        homes = [h for h in ("index.ipynb", "index.qmd", "index.md") if (Path(root) / h).is_file()]
        if homes and homes[0] not in {href for href, _ in out}:
            out.insert(0, (homes[0], "Início"))
    return out


def output_dir(root: Path, cfg: dict) -> Path:
    return (Path(root) / str((cfg.get("project") or {}).get("output-dir") or "_site")).resolve()


# --- the staging copy ----------------------------------------------------------------------------

def _git_files(root: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files, when ``root`` is the top of a git work tree."""
    if not is_git_top(root):
        return None
    try:
        proc = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                              capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode:
        return None
    return [root / name for name in sorted(set(proc.stdout.decode("utf-8", "surrogateescape").split("\0"))) if name]


def _walk_files(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        dirnames[:] = [n for n in dirnames if n not in SKIP_DIRS and not n.endswith(".egg-info")]
        out += [d / name for name in filenames]
    return out


def stage_project(root: Path, stage: Path, *, skip: set[Path]) -> int:
    """Copy the project's page files into ``stage``; return the number of files.

    Files are **copied**, never linked: a renderer writes into its project (Quarto adds lines
    to ``.gitignore`` and, when it executes, outputs into the notebooks), and those writes must
    never reach the working tree. In a git work tree the files are those git would commit
    (tracked, or untracked and not ignored); elsewhere every file but VCS, virtual environments
    and caches. Code and data folders (:data:`NOT_PAGES`) and ``skip`` (the output folders, the
    committed notebooks, replaced by their executed copies) are left out.
    """
    root = Path(root).resolve()
    skip = {Path(s).resolve() for s in skip}
    files = _git_files(root)
    if files is None:
        files = _walk_files(root)
    n = 0
    for f in files:
        rel = f.relative_to(root)
        if set(rel.parts[:-1]) & SKIP_DIRS or (len(rel.parts) > 1 and rel.parts[0] in NOT_PAGES) or not f.is_file():
            continue
        if any(f == s or s in f.parents for s in skip):
            continue
        dest = stage / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest)
        n += 1
    return n


def front_matter(nb) -> dict:
    """The YAML front matter of a notebook's first cell (raw or markdown), or ``{}``."""
    import yaml

    for cell in nb.cells[:1]:
        src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        m = re.match(r"\s*---\s*\n(.*?)\n---\s*(\n|$)", src, re.S)
        if cell.cell_type in ("raw", "markdown") and m:
            try:
                meta = yaml.safe_load(m.group(1))
            except yaml.YAMLError:
                return {}
            return meta if isinstance(meta, dict) else {}
    return {}
