"""Build the site: check the gold, run the notebooks, render the Quarto project, check it, swap it in.

One source, two renderers. ``_quarto.yml`` is an ordinary Quarto website project. The default
build runs each notebook of its render list with Jupyter (nbclient) and renders the project with
the pure-Python renderer smalldocs; ``renderer="quarto"`` renders the same staged project with
``quarto render --no-execute`` instead. Either way, in this order:

1. **Gold first** (:mod:`.gold`): gold changed after freezing, results computed against other
   gold, and results computed on a dirty tree (unless ``allow_dirty``) stop the build before it
   writes anything.
2. **Run** (:mod:`.execute`): each notebook in a fresh kernel, cached between builds; the
   committed notebook is never written.
3. **Stage and render** (:mod:`.project`, :mod:`.prepare`, :mod:`.render`): a *copy* of the
   project's pages (never hard links: a renderer's writes must not reach the working tree) with
   the executed notebooks; figures and tables numbered; rendered in its own folder.
4. **Finish** (:mod:`.enhance`, :mod:`.offline`): CDN tags Quarto injects removed, plotly.js
   installed locally, the site's stylesheet, script, search index, folding table of contents and
   previous/next links added, the downloads copied; the whole report as one archive of the
   built commit (:mod:`gabarito.publish.source_archive`), named in every "Reproduzir".
5. **Check** (:mod:`.markup`, :mod:`.offline`): no page shows data as markup, no page loads
   anything from another host.
6. **Swap** (:mod:`.swap`): the new site replaces ``out`` with two renames.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.publish.packages import add_package_downloads
from gabarito.publish.reproduce import fill_pages
from gabarito.publish.source_archive import COMMIT_FILE, add_source_archive, describe
from gabarito.publish.site.enhance import copy_downloads, enhance_pages
from gabarito.publish.site.execute import copy_ledgers, run_notebooks, say
from gabarito.publish.site.gold import ALLOW_DIRTY_ENV, allow_dirty_default, check_clean, check_gold
from gabarito.publish.site.markup import check_markup
from gabarito.publish.site.offline import check_offline, install_plotly, remote_loads
from gabarito.publish.site.prepare import check_floats, number_floats, show_code
from gabarito.publish.site.project import load_config, navigation, notebooks_to_run, output_dir, stage_project
from gabarito.publish.site.render import RENDERERS, choose_renderer, render_quarto, render_smalldocs, strip_cdn_scripts
from gabarito.publish.site.swap import swap_in

__all__ = ["RENDERERS", "build", "check_gold", "check_offline", "main", "remote_loads", "swap_in"]


def _stage_notebooks(stage: Path, executed: dict, cfg: dict, renderer: str) -> None:
    import nbformat

    for rel, path in executed.items():
        nb = nbformat.read(str(path), as_version=4)
        check_floats(nb, rel)
        nb = show_code(nb, cfg, rel)  # code only where it teaches, the same under both renderers
        if renderer == "smalldocs":
            nb = number_floats(nb)
        dest = stage / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(dest))


def _finish(root: Path, built: Path, cfg: dict, packaged: Path) -> str:
    stripped = strip_cdn_scripts(built)
    figures = install_plotly(built)
    enhance_pages(built, navigation(cfg, root))
    files = copy_downloads(root, built)
    if packaged.is_dir():  # the package and the example, made before rendering (their links resolve)
        shutil.copytree(packaged, built / "downloads", dirs_exist_ok=True)
        files += sum(1 for p in packaged.rglob("*") if p.is_file())
    check_markup(built)
    check_offline(built)
    return f"{figures} page(s) with figures, {files} download(s)" + (f", {stripped} CDN tag(s) removed" if stripped else "")


def build(root: str | Path = ".", out: str | Path = "_site", renderer: str = "auto", execute: bool = True,
          allow_dirty: bool | None = None, only: list[str] | None = None) -> Path:
    """Check the gold, run the notebooks, render, finish, check, and swap the site into ``out``.

    ``out`` is relative to ``root`` unless absolute. ``renderer``: ``auto`` (quarto when it is
    on the PATH, else smalldocs), ``smalldocs`` or ``quarto``. ``execute=False`` starts no
    kernel: notebooks show the outputs of the last build when these are still current, else
    none. ``allow_dirty`` publishes results computed on a tree with uncommitted changes (their
    pages say so); ``None`` reads ``GABARITO_ALLOW_DIRTY``. Raises :class:`GabaritoError`; on
    any error ``out`` is left as it was. ``only`` (paths of the render list, such as
    ``notebooks/custo.ipynb``) runs just those notebooks; the others keep the outputs of the last
    build when still current, else none: a quick look at the pages being written.
    """
    t0 = time.perf_counter()
    root = Path(root).resolve()
    out = Path(out)
    out = (out if out.is_absolute() else root / out).resolve()
    if out == root or out in root.parents:
        raise GabaritoError("output folder would hold the project", path=out)
    renderer, quarto = choose_renderer(renderer)
    cfg = load_config(root)

    say(f"gold: {check_gold(root)} file hash(es) match")
    dirty = check_clean(root, allow_dirty=allow_dirty_default() if allow_dirty is None else allow_dirty)
    if dirty:
        say(f"{len(dirty)} results file(s) computed on a dirty tree, published as asked; their pages say so")

    notebooks = notebooks_to_run(root, cfg)
    if only:
        unknown = sorted(set(only) - {str(n) for n in notebooks})
        if unknown:
            raise GabaritoError(f"not in the render list of _quarto.yml: {', '.join(unknown)}")
        executed = run_notebooks(root, [n for n in notebooks if str(n) not in only], execute=False)
        executed.update(run_notebooks(root, [n for n in notebooks if str(n) in only], execute=execute))
    else:
        executed = run_notebooks(root, notebooks, execute=execute)

    work = root / ".cache" / "site"
    work.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix="stage-", dir=work))
    try:
        skip = {out, output_dir(root, cfg), root / COMMIT_FILE, *(root / rel for rel in notebooks)}
        stage_project(root, stage, skip=skip)
        _stage_notebooks(stage, executed, cfg, renderer)
        packaged = stage / ".packaged"
        if add_package_downloads(root, packaged):
            shutil.copytree(packaged / "downloads", stage / "downloads", dirs_exist_ok=True)
        source = add_source_archive(root, packaged / "downloads")  # the whole report at its commit
        say(describe(source))
        t1 = time.perf_counter()
        built = render_quarto(stage, quarto) if renderer == "quarto" else render_smalldocs(stage)
        if not (built / "index.html").is_file():
            raise GabaritoError(f"{renderer} wrote no index.html", path=built)
        fill_pages(built, source)  # each Reproduzir names this build's archive
        summary = _finish(root, built, cfg, packaged / "downloads")
        copy_ledgers(executed, built)  # each page's shown numbers, next to the page (publish/ledger.py)
        say(f"rendered with {renderer} in {time.perf_counter() - t1:.1f} s; {summary}")
        swap_in(built, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    say(f"wrote {out} in {time.perf_counter() - t0:.1f} s")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gabarito.publish.site", description=(
        "Check the frozen gold, run the notebooks and render the _quarto.yml website "
        "(smalldocs, or quarto when it is on the PATH)."))
    p.add_argument("--root", default=".", help="the project folder (default .)")
    p.add_argument("--out", default="_site", help="the output folder, relative to --root (default _site)")
    p.add_argument("--renderer", choices=RENDERERS, default="auto", help="default auto: quarto if on the PATH, else smalldocs")
    p.add_argument("--no-execute", action="store_true", help="run no notebook: reuse current outputs, else none")
    p.add_argument("--allow-dirty", action="store_true", default=None,
                   help=f"publish results computed on a dirty tree (also {ALLOW_DIRTY_ENV}=1)")
    p.add_argument("--only", action="append", metavar="NOTEBOOK",
                   help="run only this notebook (e.g. notebooks/custo.ipynb; repeatable): the others keep their last outputs")
    args = p.parse_args(argv)
    try:
        build(args.root, args.out, renderer=args.renderer, execute=not args.no_execute, allow_dirty=args.allow_dirty,
              only=args.only)
    except GabaritoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
