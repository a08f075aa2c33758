"""The tool in the reader's hands, from the site alone: the wheel the built site offers installs
into a fresh virtual environment (CPU torch first, as the evaluate chapter says), its sha256 is the
one ``SHA256SUMS`` lists, and the installed ``gabarito evaluate``, run in a folder outside the
project on the example the site offers (``documentos.json``, ``perguntas.json``), writes its run
page and the same ranked lists as the project's own command on the project's own copy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.hashing import sha256_file
from gabarito.publish.packages import download_names, package_version

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def _clean_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "GABARITO_"))}
    env["HOME"] = str(home)  # caches of the installed package go to the user's folder, not the project
    return env


def test_site_downloads_hold_the_package_and_the_example(real_site):
    names = download_names(package_version(REPO))
    downloads = real_site / "downloads"
    sums = (downloads / names["sums"]).read_text(encoding="utf-8").splitlines()
    listed = dict(reversed(line.split("  ", 1)) for line in sums)
    assert set(listed) == {Path(names["wheel"]).name, Path(names["sdist"]).name}
    for name, sha in listed.items():
        assert sha256_file(downloads / "pacote" / name) == sha, name
    docs = json.loads((downloads / names["documents"]).read_text(encoding="utf-8"))
    assert docs and all({"id", "title", "text"} <= set(d) for d in docs)
    page = (real_site / "notebooks" / "avalie_sua_busca.html").read_text(encoding="utf-8")
    for key in ("wheel", "documents", "evaluation"):
        assert f"../downloads/{names[key]}" in page, f"the evaluate chapter does not link {names[key]}"


def test_wheel_from_the_site_installs_and_runs_the_example(real_site, tmp_path):
    names = download_names(package_version(REPO))
    downloads = real_site / "downloads"
    venv, work, home = tmp_path / "venv", tmp_path / "work", tmp_path / "home"
    for d in (work, home):
        d.mkdir()
    env = _clean_env(home)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + ["torch==2.13.0"], check=True, env=env, cwd=work)
    subprocess.run(pip + [str(downloads / names["wheel"])], check=True, env=env, cwd=work)
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import gabarito; print(gabarito.__file__)"],
                           check=True, env=env, cwd=work, capture_output=True, text=True).stdout.strip()
    assert Path(where).resolve().is_relative_to(venv.resolve()), where
    for key in ("documents", "evaluation"):
        shutil.copyfile(downloads / names[key], work / Path(names[key]).name)
    args = ["evaluate", "--documents", "documentos.json", "--evaluation", "perguntas.json", "--method", "bm25"]
    run = subprocess.run([str(venv / "bin" / "gabarito"), *args, "--out", "primeira-avaliacao"], env=env, cwd=work,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    out = work / "primeira-avaliacao"
    for name in ("relatorio.html", "run.trec", "qrels.trec", "run.json", "results.csv"):
        assert (out / name).is_file(), name
    assert not (REPO / "primeira-avaliacao").exists()
    # the same command of the project, on the project's own copy of the example: the same lists
    ref = tmp_path / "ref"
    mine = subprocess.run([sys.executable, "-m", "gabarito.cli", "evaluate", "--documents", str(REPO / "data/helpcenter/docs"),
                           "--evaluation", str(REPO / "data/helpcenter/evaluation.json"), "--method", "bm25",
                           "--out", str(ref), "--log", str(tmp_path / "log.jsonl")], cwd=REPO, capture_output=True, text=True)
    assert mine.returncode == 0, mine.stderr[-2000:]
    lists = [[line.split()[:5] for line in (d / "run.trec").read_text().splitlines()] for d in (out, ref)]
    assert lists[0] and lists[0] == lists[1]  # the last column is the run's own id
