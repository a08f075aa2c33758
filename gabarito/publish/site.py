"""Build the site: check the gold, run the notebooks, render the Quarto project, swap it in.

One source, two renderers. ``_quarto.yml`` is an ordinary Quarto website project. The default
build runs each notebook of its render list with Jupyter (nbclient) and renders the project with
the pure-Python renderer smalldocs (``smalldocs.site.build``); ``renderer="quarto"`` renders the
same staged project with ``quarto render --no-execute`` instead. Either way:

1. **Gold first.** Every ``case-studies/*/gold.lock.json`` must still match its gold files
   (:func:`gabarito.inputs.gold.verify_frozen`), and every ``case-studies/*/results.json`` must record,
   in ``provenance.gold_sha256``, the sha256 of the gold files as they are now. Otherwise the
   build stops before it writes anything: the results were computed against another gold.
2. **Run.** Each notebook runs in a fresh ``python3`` kernel of this interpreter, with the
   notebook's folder as working directory. The committed notebook is never written: the
   executed copy goes to ``.cache/site/executed/`` and into the staging project. A notebook is
   run again only when it, a JSON file under ``case-studies/``, or the ``gabarito`` package
   changed since the last build.
3. **Render** a staging copy of the project (hard links, plus the executed notebooks) into its
   own output folder.
4. **Offline.** ``plotly.min.js`` is copied from the installed plotly package into
   ``site_libs/plotly/`` and loaded by each page that has a figure; then every page and
   stylesheet is scanned, and a site that would load anything from another host is refused.
5. **Swap.** The new site replaces ``out`` with two renames, so a failed build never leaves a
   half-written site.
"""

from __future__ import annotations

import argparse
import hashlib
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path, PurePosixPath

from gabarito.errors import GabaritoError
from gabarito.inputs.gold import verify_frozen
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.publish.plots import FIGURE_MARKER, plotly_js_path

#: Bump to invalidate every cached notebook execution.
CACHE_VERSION = "1"
#: Folders never copied into the staging project.
SKIP_DIRS = frozenset({
    ".git", ".venv", "venv", ".cache", ".quarto", "node_modules", "__pycache__", ".pytest_cache",
    ".ipynb_checkpoints", ".mypy_cache", ".ruff_cache", ".tox",
})
#: Where plotly.js goes in the built site.
PLOTLY_JS = PurePosixPath("site_libs/plotly/plotly.min.js")
#: Run in every kernel before the first cell (IPython ``exec_lines``).
KERNEL_SETUP = "import gabarito.publish.plots as _gabarito_plots; _gabarito_plots.setup_plotly(); del _gabarito_plots"
RENDERERS = ("auto", "smalldocs", "quarto")


def _say(msg: str) -> None:
    print(f"site: {msg}", file=sys.stderr, flush=True)


# --- the project -----------------------------------------------------------------------------

def load_config(root: Path) -> dict:
    """Read ``_quarto.yml``."""
    import yaml

    path = root / "_quarto.yml"
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
        found = sorted(PurePosixPath(p.relative_to(root).as_posix()) for p in root.glob(pattern) if p.is_file())
        if negate:
            drop.update(found)
        else:
            keep += [f for f in found if f not in keep]
    return [f for f in keep if f not in drop]


def notebooks_to_run(root: Path, cfg: dict) -> list[PurePosixPath]:
    return [p for p in render_list(root, cfg) if p.suffix == ".ipynb"]


# --- 1. the gold -----------------------------------------------------------------------------

def check_gold(root: Path) -> int:
    """Refuse gold that changed after freezing, and results computed against other gold; return files checked."""
    studies = Path(root) / "case-studies"
    checked = 0
    for manifest in sorted(studies.glob("*/gold.lock.json")):
        checked += len(verify_frozen(manifest))
    for study in sorted(p for p in studies.glob("*") if p.is_dir()):
        for results in sorted(study.glob("*.json")):
            if results.name == "gold.lock.json":
                continue
            data = _read_json(results)
            provenance = data.get("provenance") if isinstance(data, dict) else None
            gold = provenance.get("gold_sha256") if isinstance(provenance, dict) else None
            if gold is None and results.name != "results.json":
                continue  # not a results file (questions, samples, ...)
            if not isinstance(gold, dict) or not gold:
                raise GabaritoError(
                    "has no provenance.gold_sha256, so nothing shows which gold it was computed "
                    "against: rerun the study", path=results)
            for rel, expected in gold.items():
                path = results.parent / rel
                if not path.is_file():
                    raise GabaritoError(f"results were computed against gold file {rel}, which is missing: "
                                        "rerun the study", path=results)
                got = sha256_file(path)
                if got != expected:
                    raise GabaritoError(
                        f"results were computed against another gold: {rel} now has sha256 {got[:12]}… "
                        f"but the results record {str(expected)[:12]}…; rerun the study", path=results)
                checked += 1
    return checked


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GabaritoError(f"not valid JSON: {exc}", path=path) from None


# --- 2. running the notebooks ------------------------------------------------------------------

def _package_dir() -> Path:
    from gabarito.paths import PACKAGE

    return PACKAGE


def inputs_digest(root: Path) -> str:
    """sha256 over what a notebook's outputs depend on besides itself: the study JSON and the code."""
    import plotly

    h = hashlib.sha256(f"gabarito-site {CACHE_VERSION} plotly {plotly.__version__}\n".encode())
    groups = [(Path(root) / "case-studies", "*.json"), (_package_dir(), "*.py")]
    for base, pattern in groups:
        if not base.is_dir():
            continue
        for p in sorted(base.rglob(pattern)):
            if "__pycache__" in p.parts or ".ipynb_checkpoints" in p.parts:
                continue
            h.update(f"{base.name}/{p.relative_to(base).as_posix()} {sha256_file(p)}\n".encode())
    return h.hexdigest()


def execute_notebook(src: Path, root: Path, *, timeout: int = 900, log: Path | None = None):
    """Run a notebook top to bottom in a fresh kernel of this interpreter; return the executed copy.

    The working directory is the notebook's folder (so notebooks read ``../case-studies/...``);
    ``PYTHONPATH`` starts with the project root and this ``gabarito``; plotly is set up offline
    (:func:`gabarito.publish.plots.setup_plotly`) before the first cell. ``src`` is not written.
    """
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    try:
        nb = nbformat.read(str(src), as_version=4)
    except Exception as exc:  # nbformat raises several kinds for a broken file
        raise GabaritoError(f"cannot read notebook: {exc}", path=src) from None
    for cell in nb.cells:  # Quarto's `#| eval: false`: shown, never run
        if cell.cell_type == "code" and _cell_options(cell.source).get("eval") is False:
            tags = cell.metadata.setdefault("tags", [])
            if "skip-execution" not in tags:
                tags.append("skip-execution")
    paths = [str(Path(root).resolve()), str(_package_dir().parent)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    # the native kernel of *this* interpreter, whatever kernelspecs the user has installed
    ksm = KernelSpecManager(kernel_dirs=[], ensure_native_kernel=True)
    km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=ksm)
    client = NotebookClient(
        nb, km=km, timeout=timeout, allow_errors=False, record_timing=False,
        resources={"metadata": {"path": str(src.parent.resolve())}},
        extra_arguments=[f"--InteractiveShellApp.exec_lines={KERNEL_SETUP}"],
    )
    stderr = open(log, "wb") if log else subprocess.DEVNULL  # the kernel's own messages
    try:
        client.execute(env=env, stderr=stderr)
    except CellExecutionError as exc:
        text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", str(exc))  # the traceback's colours
        lines = [ln for ln in text.splitlines() if ln.strip()]
        raise GabaritoError(f"a cell failed: {lines[-1] if lines else exc}", path=src) from None
    except (CellTimeoutError, DeadKernelError) as exc:
        raise GabaritoError(f"{type(exc).__name__}: {exc}", path=src) from None
    finally:
        if log:
            stderr.close()
    return nb


class _Cache:
    """Executed notebooks from the last build, keyed by the notebook's hash and :func:`inputs_digest`."""

    def __init__(self, root: Path):
        self.dir = Path(root) / ".cache" / "site"
        self.index_path = self.dir / "cache.json"
        try:
            self.index = json.loads(self.index_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            self.index = {}

    def path(self, rel: PurePosixPath) -> Path:
        return self.dir / "executed" / rel

    def get(self, rel: PurePosixPath, key: str) -> Path | None:
        p = self.path(rel)
        return p if self.index.get(str(rel)) == key and p.is_file() else None

    def put(self, rel: PurePosixPath, key: str, nb) -> Path:
        import nbformat

        p = self.path(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.{uuid.uuid4().hex}.tmp")
        nbformat.write(nb, str(tmp))
        os.replace(tmp, p)
        self.index[str(rel)] = key
        atomic_write_json(self.index_path, self.index)
        return p


def run_notebooks(root: Path, notebooks: list[PurePosixPath], *, execute: bool = True) -> dict[PurePosixPath, Path]:
    """Executed copies of the notebooks, from the cache when nothing they depend on changed."""
    cache = _Cache(root)
    digest = inputs_digest(root)
    out: dict[PurePosixPath, Path] = {}
    for rel in notebooks:
        src = Path(root) / rel
        key = hashlib.sha256(f"{sha256_file(src)} {digest}".encode()).hexdigest()
        hit = cache.get(rel, key)
        if hit is not None:
            _say(f"{rel}: unchanged, outputs from the last build")
            out[rel] = hit
        elif not execute:
            _say(f"{rel}: not run (execute=False) and no current outputs: rendered without outputs")
            out[rel] = src
        else:
            t0 = time.perf_counter()
            cache.dir.mkdir(parents=True, exist_ok=True)
            nb = execute_notebook(src, root, log=cache.dir / f"kernel-{rel.stem}.log")
            out[rel] = cache.put(rel, key, nb)
            _say(f"{rel}: ran in {time.perf_counter() - t0:.1f} s")
    return out


# --- 3. staging and rendering --------------------------------------------------------------------

def _link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _git_files(root: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files, when ``root`` is the top of a git work tree."""
    try:
        top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=30)
        if top.returncode or Path(top.stdout.strip()).resolve() != root:
            return None
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
    """Mirror the project into ``stage`` with hard links; return the number of files.

    In a git work tree the files are those git would commit (tracked, or untracked and not
    ignored), so the site never depends on local leftovers; elsewhere every file but VCS,
    virtual environments and caches. ``skip`` (the output folders, the committed notebooks)
    is left out.
    """
    root = Path(root).resolve()
    skip = {Path(s).resolve() for s in skip}
    files = _git_files(root)
    if files is None:
        files = _walk_files(root)
    n = 0
    for f in files:
        rel = f.relative_to(root)
        if set(rel.parts[:-1]) & SKIP_DIRS or not f.is_file():
            continue
        if any(f == s or s in f.parents for s in skip):
            continue
        _link_or_copy(f, stage / rel)
        n += 1
    return n


def _front_matter(nb) -> dict:
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


def _html_options(cfg: dict) -> dict:
    fmt = cfg.get("format")
    html_opts = fmt.get("html") if isinstance(fmt, dict) else None
    return html_opts if isinstance(html_opts, dict) else {}


def fold_code(nb, cfg: dict):
    """Give each code cell the page's ``code-fold``/``code-summary`` as its own ``#|`` options.

    Quarto folds every cell of a page with ``code-fold: true``; smalldocs 0.5.4 folds a
    notebook's cell only when the cell itself says so. Writing the page's options into each
    cell of the staged copy makes both renderers show the same page.
    """
    front = _front_matter(nb)
    fmt = front.get("format")
    page_html = fmt.get("html") if isinstance(fmt, dict) and isinstance(fmt.get("html"), dict) else {}
    opts = {**_html_options(cfg), **{k: v for k, v in front.items() if k != "format"}, **page_html}
    fold = opts.get("code-fold")
    if fold in (None, False, "false"):
        return nb
    fold = "true" if fold is True else str(fold)
    summary = str(opts.get("code-summary") or "Code").replace('"', "'")
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        head = []
        for line in src.split("\n"):
            if not line.startswith("#|"):
                break
            head.append(line[2:].split(":", 1)[0].strip())
        extra = []
        if "code-fold" not in head:
            extra.append(f"#| code-fold: {fold}")
        if "code-summary" not in head:
            extra.append(f'#| code-summary: "{summary}"')
        cell.source = "\n".join(extra + [src])
    return nb


def _cell_options(src: str) -> dict:
    import yaml

    head = []
    for line in src.split("\n"):
        if not line.startswith("#|"):
            break
        head.append(line[2:].strip())
    try:
        opts = yaml.safe_load("\n".join(head)) if head else {}
    except yaml.YAMLError:
        return {}
    return opts if isinstance(opts, dict) else {}


def caption_figures(nb):
    """Put a plotly figure with ``#| fig-cap`` in Quarto's figure markup, with its caption.

    smalldocs 0.5.4 captions only image outputs (PNG, SVG); Quarto captions any figure output.
    """
    import html as _html

    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        caps = _cell_options(cell.source if isinstance(cell.source, str) else "".join(cell.source)).get("fig-cap")
        if not caps:
            continue
        n = 0
        for out in cell.get("outputs", []):
            data = out.get("data") or {}
            value = data.get("text/html")
            value = "".join(value) if isinstance(value, list) else value
            if not value or FIGURE_MARKER not in value or "<figcaption" in value:
                continue
            cap = caps[n] if isinstance(caps, list) and n < len(caps) else caps if isinstance(caps, str) else None
            n += 1
            if cap:
                data["text/html"] = ('<div class="quarto-figure quarto-figure-center">\n<figure class="figure">\n'
                                     f"{value}\n<figcaption>{_html.escape(str(cap))}</figcaption>\n</figure>\n</div>")
    return nb


def render_smalldocs(stage: Path) -> Path:
    """``smalldocs.site.build(stage)``: the pure-Python renderer, in this process."""
    from smalldocs.config import BuildError, ConfigError
    from smalldocs.site import build as smalldocs_build

    try:
        site = smalldocs_build(stage, quiet=True)
    except (ConfigError, BuildError) as exc:
        raise GabaritoError(f"smalldocs: {exc}") from None
    for w in site.warnings:
        _say(f"smalldocs warning: {w}")
    return Path(site.out)


def render_quarto(stage: Path, quarto: str) -> Path:
    """``quarto render STAGE --no-execute``: the notebooks already hold their outputs."""
    proc = subprocess.run([quarto, "render", str(stage), "--no-execute"], cwd=stage,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        tail = " | ".join(proc.stdout.strip().splitlines()[-5:])
        raise GabaritoError(f"quarto render failed (exit {proc.returncode}): {tail}")
    out_dir = (load_config(stage).get("project") or {}).get("output-dir") or "_site"
    return stage / out_dir


# --- 4. offline -------------------------------------------------------------------------------

def install_plotly(site: Path) -> int:
    """Copy plotly.min.js into the site and load it in the head of each page with a figure."""
    pages = [p for p in sorted(site.rglob("*.html")) if FIGURE_MARKER in p.read_text(encoding="utf-8", errors="replace")]
    if not pages:
        return 0
    dest = site / PLOTLY_JS
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plotly_js_path(), dest)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        href = Path(os.path.relpath(dest, page.parent)).as_posix()
        tag = f'<script src="{href}" charset="utf-8"></script>'
        if tag in text:
            continue
        i = text.lower().find("</head>")
        if i < 0:
            raise GabaritoError("page has a plotly figure but no </head> to load plotly.js in", path=page)
        page.write_text(text[:i] + tag + "\n" + text[i:], encoding="utf-8")
    return len(pages)


_REMOTE = re.compile(r"^\s*(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?//", re.S)
_LOCAL_HOSTS = re.compile(r"^\s*(?:https?:)?//(?:127\.0\.0\.1|localhost|\[::1\])(?:[:/]|$)", re.I)
_JS_IMPORT = re.compile(r"""\bimport\s*(?:\(\s*|[\w$*{},\s]+?\bfrom\s*)["']((?:https?:)?//[^"']+)""")
_CSS_URL = re.compile(r"""@import\s+(?:url\()?\s*["']?((?:https?:)?//[^"')\s;]+)|url\(\s*["']?((?:https?:)?//[^"')\s]+)""", re.I)
#: Tag attributes a browser loads by itself (``<a href>`` is only followed when clicked).
_LOADS = {"script": ("src",), "img": ("src", "srcset"), "iframe": ("src",), "source": ("src", "srcset"),
          "video": ("src", "poster"), "audio": ("src",), "embed": ("src",), "object": ("data",),
          "track": ("src",), "input": ("src",), "link": ("href",)}
#: ``<link rel>`` values that are metadata, never fetched.
_LINK_META = {"canonical", "alternate", "license", "author", "me", "bookmark", "external", "help", "search", "next", "prev"}


def _is_remote(url: str) -> bool:
    return bool(_REMOTE.match(url)) and not url.strip().lower().startswith(("data:", "blob:", "about:", "javascript:")) \
        and not _LOCAL_HOSTS.match(url) and url.strip().lower().startswith(("http:", "https:", "//"))


class _Scan(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "link" and set((a.get("rel") or "").lower().split()) & _LINK_META:
            pass
        else:
            for attr in _LOADS.get(tag, ()):
                for url in re.split(r",\s*", a.get(attr) or "") if attr == "srcset" else [a.get(attr) or ""]:
                    url = url.strip().split(" ")[0] if attr == "srcset" else url
                    if url and _is_remote(url):
                        self.found.append((f"<{tag} {attr}>", url))
        if "style" in a:
            self._css(a["style"], f"<{tag} style>")
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            for url in _JS_IMPORT.findall(data):
                if _is_remote(url):
                    self.found.append(("<script> import", url))
        elif self._in == "style":
            self._css(data, "<style>")

    def _css(self, text, where):
        for a, b in _CSS_URL.findall(text):
            if _is_remote(a or b):
                self.found.append((where, a or b))


def remote_loads(site: Path) -> list[tuple[str, str, str]]:
    """``(file, what, url)`` for everything a browser would fetch from another host."""
    found = []
    for page in sorted(site.rglob("*.html")):
        scan = _Scan()
        scan.feed(page.read_text(encoding="utf-8", errors="replace"))
        found += [(page.relative_to(site).as_posix(), what, url) for what, url in scan.found]
    for css in sorted(site.rglob("*.css")):
        for a, b in _CSS_URL.findall(css.read_text(encoding="utf-8", errors="replace")):
            if _is_remote(a or b):
                found.append((css.relative_to(site).as_posix(), "css url", a or b))
    return found


def check_offline(site: Path) -> None:
    found = remote_loads(site)
    if not found:
        return
    hints = []
    urls = " ".join(u for _, _, u in found)
    if "mermaid" in urls:
        hints.append("smalldocs loads mermaid from a CDN: draw the diagram another way")
    if "katex" in urls or "mathjax" in urls.lower():
        hints.append("maths ($...$) loads KaTeX/MathJax from a CDN: write it without maths")
    if "fonts.googleapis" in urls:
        hints.append("the theme imports web fonts: use theme default, litera, pulse, cerulean, slate or quartz")
    shown = "; ".join(f"{f} {what} {u}" for f, what, u in found[:5])
    more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
    raise GabaritoError(f"the site would load files from other hosts and must work offline: {shown}{more}"
                        + (f". {'; '.join(hints)}" if hints else ""))


# --- 5. swap -----------------------------------------------------------------------------------

def _looks_like_site(path: Path) -> bool:
    return not any(path.iterdir()) or (path / "index.html").exists() or (path / "site_libs").is_dir()


def swap_in(new: Path, out: Path) -> Path:
    """Replace ``out`` by ``new``: move it beside ``out``, then two renames."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and (not out.is_dir() or not _looks_like_site(out)):
        raise GabaritoError("output folder exists and is not a built site; refusing to replace it", path=out)
    tag = uuid.uuid4().hex[:8]
    incoming = out.parent / f".{out.name}.new-{tag}"
    try:
        os.replace(new, incoming)
    except OSError:  # another file system
        shutil.copytree(new, incoming, symlinks=True)
    old = out.parent / f".{out.name}.old-{tag}" if out.exists() else None
    if old is not None:
        os.replace(out, old)
    try:
        os.replace(incoming, out)
    except BaseException:
        if old is not None:
            os.replace(old, out)
        shutil.rmtree(incoming, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return out


# --- the build ---------------------------------------------------------------------------------

def choose_renderer(renderer: str) -> tuple[str, str | None]:
    if renderer not in RENDERERS:
        raise GabaritoError(f"unknown renderer {renderer!r}: use one of {', '.join(RENDERERS)}")
    quarto = shutil.which("quarto")
    if renderer == "quarto" and not quarto:
        raise GabaritoError("renderer quarto asked for, but quarto is not on the PATH")
    if renderer == "auto":
        renderer = "quarto" if quarto else "smalldocs"
    return renderer, quarto


def build(root: str | Path = ".", out: str | Path = "_site", renderer: str = "auto", execute: bool = True) -> Path:
    """Check the gold, run the notebooks, render, check offline, and swap the site into ``out``.

    ``out`` is relative to ``root`` unless absolute. ``renderer``: ``auto`` (quarto when it is
    on the PATH, else smalldocs), ``smalldocs`` or ``quarto``. ``execute=False`` starts no
    kernel: notebooks show the outputs of the last build when these are still current, else
    none. Raises :class:`GabaritoError`; on any error ``out`` is left as it was.
    """
    t0 = time.perf_counter()
    root = Path(root).resolve()
    out = Path(out)
    out = (out if out.is_absolute() else root / out).resolve()
    if out == root or out in root.parents:
        raise GabaritoError("output folder would hold the project", path=out)
    renderer, quarto = choose_renderer(renderer)
    cfg = load_config(root)

    n = check_gold(root)
    _say(f"gold: {n} file hash(es) match")

    notebooks = notebooks_to_run(root, cfg)
    executed = run_notebooks(root, notebooks, execute=execute)

    work = root / ".cache" / "site"
    work.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix="stage-", dir=work))
    try:
        cfg_out = (root / str((cfg.get("project") or {}).get("output-dir") or "_site")).resolve()
        stage_project(root, stage, skip={out, cfg_out, *(root / rel for rel in notebooks)})
        import nbformat

        for rel, path in executed.items():
            nb = nbformat.read(str(path), as_version=4)
            if renderer == "smalldocs":
                nb = caption_figures(fold_code(nb, cfg))
            dest = stage / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, str(dest))
        t1 = time.perf_counter()
        built = render_quarto(stage, quarto) if renderer == "quarto" else render_smalldocs(stage)
        if not (built / "index.html").is_file():
            raise GabaritoError(f"{renderer} wrote no index.html", path=built)
        figures = install_plotly(built)
        check_offline(built)
        _say(f"rendered with {renderer} in {time.perf_counter() - t1:.1f} s; {figures} page(s) with figures")
        swap_in(built, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    _say(f"wrote {out} in {time.perf_counter() - t0:.1f} s")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gabarito.publish.site", description=(
        "Check the frozen gold, run the notebooks and render the _quarto.yml website "
        "(smalldocs, or quarto when it is on the PATH)."))
    p.add_argument("--root", default=".", help="the project folder (default .)")
    p.add_argument("--out", default="_site", help="the output folder, relative to --root (default _site)")
    p.add_argument("--renderer", choices=RENDERERS, default="auto", help="default auto: quarto if on the PATH, else smalldocs")
    p.add_argument("--no-execute", action="store_true", help="run no notebook: reuse current outputs, else none")
    args = p.parse_args(argv)
    try:
        build(args.root, args.out, renderer=args.renderer, execute=not args.no_execute)
    except GabaritoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
