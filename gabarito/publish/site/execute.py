"""Running the notebooks: each in a fresh kernel of this interpreter, cached between builds.

Each notebook runs with the notebook's folder as working directory. The committed notebook is
never written: the executed copy goes to ``.cache/site/executed/``. A notebook runs again only
when it, a study file under ``case-studies/`` (results, run logs, page analysis), a data file
under ``data/``, or the ``gabarito`` package changed since the last build, or when the executed
copy in the cache is not byte for byte the one the build wrote (its sha256 is kept in the cache's
index beside the key). Each kernel gets a temporary folder of its own (``$TMPDIR``), removed when
its notebook ends: what a page leaves there is not left on the machine.

Each run also collects the page's ledger of shown numbers (:mod:`gabarito.publish.ledger`):
``$GABARITO_LEDGER`` names ``<executed copy>.ledger.json`` beside the cached copy, and a cached copy
without its ledger runs again; :func:`copy_ledgers` puts each ledger next to its built page.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path, PurePosixPath
from typing import NoReturn

from gabarito.core.page_guard import PAGE_ENV
from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.progress import bar as progress_bar
from gabarito.publish.site.prepare import cell_options

#: Bump to invalidate every cached notebook execution.
CACHE_VERSION = "2"
#: Run in every kernel before the first cell (IPython ``exec_lines``).
KERNEL_SETUP = "import gabarito.publish.plots as _gabarito_plots; _gabarito_plots.setup_plotly(); del _gabarito_plots"


def say(msg: str) -> None:
    print(f"site: {msg}", file=sys.stderr, flush=True)


def _package_dir() -> Path:
    from gabarito.paths import PACKAGE

    return PACKAGE


def inputs_digest(root: Path) -> str:
    """sha256 over what a notebook's outputs depend on besides itself: the study JSON, the code, the
    project file and the other pages."""
    import plotly

    h = hashlib.sha256(f"gabarito-site {CACHE_VERSION} plotly {plotly.__version__}\n".encode())
    # the pages read each other's titles and the navbar (the home page lists every chapter): the
    # project file and the notebooks are inputs of every notebook
    groups = [(Path(root) / "case-studies", ("*.json", "*.jsonl", "*.py")), (Path(root) / "data", ("*.json",)),
              (_package_dir(), ("*.py", "*.css", "*.js")), (Path(root) / "notebooks", ("*.ipynb",))]
    for name in ("_quarto.yml", "index.ipynb"):
        if (Path(root) / name).is_file():
            h.update(f"{name} {sha256_file(Path(root) / name)}\n".encode())
    for base, patterns in groups:
        if not base.is_dir():
            continue
        for p in sorted(q for pattern in patterns for q in base.rglob(pattern)):
            if "__pycache__" in p.parts or ".ipynb_checkpoints" in p.parts or p.name.startswith("."):
                continue
            h.update(f"{base.name}/{p.relative_to(base).as_posix()} {sha256_file(p)}\n".encode())
    return h.hexdigest()


def execute_notebook(src: Path, root: Path, *, timeout: int = 900, log: Path | None = None,
                     ledger: Path | None = None):
    """Run a notebook top to bottom in a fresh kernel of this interpreter; return the executed copy.

    The working directory is the notebook's folder (so notebooks read ``../case-studies/...``);
    ``PYTHONPATH`` starts with the project root and this ``gabarito``; plotly is set up offline
    (:func:`gabarito.publish.plots.setup_plotly`) before the first cell. ``src`` is not written.
    ``ledger``: the file that collects the page's shown numbers (started empty here).
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
        if cell.cell_type == "code" and cell_options(cell.source).get("eval") is False:
            tags = cell.metadata.setdefault("tags", [])
            if "skip-execution" not in tags:
                tags.append("skip-execution")
    paths = [str(Path(root).resolve()), str(_package_dir().parent)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env[PAGE_ENV] = _page_name(src, root)  # a page reads stored statistics, never computes one
    if ledger is not None:
        _start_ledger(env, ledger, src, root)
    scratch = tempfile.mkdtemp(prefix="gabarito-kernel-")  # the page's temporary files, removed below
    env["TMPDIR"] = env["TEMP"] = env["TMP"] = scratch
    # the native kernel of *this* interpreter, whatever kernelspecs the user has installed
    ksm = KernelSpecManager(kernel_dirs=[], ensure_native_kernel=True)
    km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=ksm)
    client = NotebookClient(
        nb, km=km, timeout=timeout, allow_errors=False, record_timing=False,
        resources={"metadata": {"path": str(src.parent.resolve())}},
        extra_arguments=[f"--InteractiveShellApp.exec_lines={KERNEL_SETUP}"],
    )
    stderr = open(log, "wb") if log else subprocess.DEVNULL  # the kernel's own messages
    cells = sum(1 for c in nb.cells if c.cell_type == "code" and "skip-execution" not in c.metadata.get("tags", []))
    bar = progress_bar(total=cells, desc=f"running {src.name}", unit="cell")
    client.on_cell_executed = lambda **_: bar.update(1)
    loop = _SignalLoop()
    try:
        try:
            loop.run_until_complete(client.async_execute(env=env, stderr=stderr))
        except BaseException as exc:
            if loop.received or _is_interrupt(exc):  # Ctrl-C, whatever nbclient made of it
                _stopped(loop.received, km)
            raise
        if loop.received:  # the signal came as the last cell ended: stop all the same
            _stopped(loop.received, km)
    except CellExecutionError as exc:
        text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", str(exc))  # the traceback's colours
        lines = [ln for ln in text.splitlines() if ln.strip()]
        raise GabaritoError(f"a cell failed: {lines[-1] if lines else exc}", path=src) from None
    except (CellTimeoutError, DeadKernelError) as exc:
        raise GabaritoError(f"{type(exc).__name__}: {exc}", path=src) from None
    finally:
        bar.close()
        _shutdown(km, loop)  # the client does not own ``km``: its kernel is ours to stop
        _close(loop)
        if log:
            stderr.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return nb


def _page_name(src: Path, root: Path) -> str:
    """The page's path relative to the project (its own name when it lies outside)."""
    try:
        return Path(src).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return Path(src).name


def _start_ledger(env: dict, ledger: Path, src: Path, root: Path) -> None:
    """Point the kernel at an empty ledger for this page."""
    from gabarito.publish.ledger import LEDGER_ENV, SCHEMA
    from gabarito.publish.ledger import PAGE_ENV as LEDGER_PAGE_ENV

    ledger.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(ledger, {"schema": SCHEMA, "records": []})
    env[LEDGER_ENV] = str(ledger.resolve())
    env[LEDGER_PAGE_ENV] = _page_name(src, root)


def ledger_path(executed: Path) -> Path:
    """The ledger beside an executed copy (``custo.ipynb`` -> ``custo.ledger.json``)."""
    from gabarito.publish.ledger_check import SUFFIX

    return Path(executed).with_name(Path(executed).stem + SUFFIX)


def copy_ledgers(executed: dict[PurePosixPath, Path], built: Path) -> int:
    """Put each executed page's ledger next to its built page; return how many."""
    n = 0
    for rel, path in executed.items():
        src = ledger_path(path)
        if src.is_file():
            dest = ledger_path(Path(built) / rel)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            n += 1
    return n


def _shutdown(km, loop: asyncio.AbstractEventLoop) -> None:
    """Stop the notebook's kernel (a kernel left running is a process per page per build)."""
    with contextlib.suppress(BaseException):
        if km.has_kernel:
            loop.run_until_complete(km.shutdown_kernel(now=True))
    _kill(km)


def _kill(km) -> None:
    """Kill the kernel's process if it still runs, and reap it."""
    process = getattr(getattr(km, "provisioner", None), "process", None)
    if process is not None and process.poll() is None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait(timeout=10)


class _SignalLoop(asyncio.SelectorEventLoop):
    """The event loop a notebook runs in; it notes the signals its handlers received.

    nbclient answers SIGINT (and SIGTERM) by shutting the kernel down, so an interrupted run
    ends in "Kernel died" or a cancelled task; :attr:`received` tells it apart from a kernel
    that died on its own, and the run ends as one ``KeyboardInterrupt``."""

    def __init__(self) -> None:
        super().__init__()
        self.received: list[int] = []

    def add_signal_handler(self, sig, callback, *args):
        def noted(*cb_args):
            self.received.append(sig)
            callback(*cb_args)

        super().add_signal_handler(sig, noted, *args)


def _is_interrupt(exc: BaseException) -> bool:
    """Ctrl-C seen outside nbclient's handler: the interrupt itself, a cancelled task, or a
    cell stopped by ``KeyboardInterrupt`` (the kernel got the signal too)."""
    return isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError)) or \
        getattr(exc, "ename", None) == "KeyboardInterrupt"


def _stopped(received: list[int], km) -> NoReturn:
    """Kill the notebook's kernel if it still runs (an interrupted build leaves no process),
    then stop as the signal asks: ``KeyboardInterrupt`` for SIGINT (one line and exit 130 in
    the CLI), a silent exit ``128 + n`` for another signal (SIGTERM: 143)."""
    _kill(km)
    other = [sig for sig in received if sig != signal.SIGINT]
    if other:
        raise SystemExit(128 + int(other[0]))
    raise KeyboardInterrupt from None


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what an interrupted run left pending, then close the loop (no "Task was destroyed")."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        with contextlib.suppress(BaseException):
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    with contextlib.suppress(BaseException):
        loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


class Cache:
    """Executed notebooks from the last build, keyed by the notebook's hash and :func:`inputs_digest`;
    the index keeps each executed copy's sha256 too (``{"key", "sha256"}``), and a copy that no longer
    has it (edited, cut short, an index of an older build) is not used."""

    def __init__(self, root: Path):
        self.dir = Path(root) / ".cache" / "site"
        self.index_path = self.dir / "cache.json"
        try:
            self.index = json.loads(self.index_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            self.index = {}
        if not isinstance(self.index, dict):  # a damaged index: nothing cached is trusted
            self.index = {}

    def path(self, rel: PurePosixPath) -> Path:
        return self.dir / "executed" / rel

    def get(self, rel: PurePosixPath, key: str) -> Path | None:
        p = self.path(rel)
        entry = self.index.get(str(rel))
        if not isinstance(entry, dict) or entry.get("key") != key or not p.is_file():
            return None
        if not ledger_path(p).is_file():  # a copy from before the ledger, or its ledger lost
            return None
        if sha256_file(p) != entry.get("sha256"):
            say(f"{rel}: the cached outputs are not the ones the last build wrote; running it again")
            return None
        return p

    def put(self, rel: PurePosixPath, key: str, nb) -> Path:
        import nbformat

        p = self.path(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.{uuid.uuid4().hex}.tmp")
        nbformat.write(nb, str(tmp))
        os.replace(tmp, p)
        self.index[str(rel)] = {"key": key, "sha256": sha256_file(p)}
        atomic_write_json(self.index_path, self.index)
        return p


def run_notebooks(root: Path, notebooks: list[PurePosixPath], *, execute: bool = True) -> dict[PurePosixPath, Path]:
    """Executed copies of the notebooks, from the cache when nothing they depend on changed."""
    cache = Cache(root)
    digest = inputs_digest(root)
    out: dict[PurePosixPath, Path] = {}
    for rel in notebooks:
        src = Path(root) / rel
        key = hashlib.sha256(f"{sha256_file(src)} {digest}".encode()).hexdigest()
        hit = cache.get(rel, key)
        if hit is not None:
            say(f"{rel}: unchanged, outputs from the last build")
            out[rel] = hit
        elif not execute:
            say(f"{rel}: not run (execute=False) and no current outputs: rendered without outputs")
            out[rel] = src
        else:
            t0 = time.perf_counter()
            cache.dir.mkdir(parents=True, exist_ok=True)
            nb = execute_notebook(src, root, log=cache.dir / f"kernel-{rel.stem}.log",
                                  ledger=ledger_path(cache.path(rel)))
            out[rel] = cache.put(rel, key, nb)
            say(f"{rel}: ran in {time.perf_counter() - t0:.1f} s")
    return out
