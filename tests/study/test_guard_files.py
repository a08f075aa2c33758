"""Issue 39: one guard for every file a page reads or a command trusts, through the ``gabarito`` command.

Each case edits one committed file of a copy of the project (a run log, a sample, a pool, a run
folder whose manifest was deleted, a manifest that is ``[]``) and asserts that ``gabarito site`` and
``gabarito report`` refuse it in one line naming the file, exit 2, before writing anything, and that
``gabarito studies`` does not call the study current. The refusals happen before any page runs, so
these tests build nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.study.integrity import MANIFEST

REPO = Path(__file__).resolve().parents[2]
#: One committed run folder of the help center (the first, whatever the last regeneration named it).
HELPCENTER_RUN = min(p.name for p in (REPO / "case-studies" / "helpcenter" / "runs").iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """A copy of what the commands read: the config, pages, studies, data and the package."""
    root = tmp_path_factory.mktemp("pristine") / "proj"
    root.mkdir()
    for name in ("_quarto.yml", "index.ipynb"):
        shutil.copy(REPO / name, root / name)
    for name in ("notebooks", "case-studies", "data", "gabarito"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    return root


@pytest.fixture
def project(pristine, tmp_path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(pristine, root, symlinks=True)
    return root


def gabarito(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "GABARITO_CACHE_DIR": str(root / ".cache")}
    env.pop("GABARITO_LEGACY_FOLDERS", None)
    return subprocess.run([sys.executable, "-m", "gabarito.cli", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def refused(proc: subprocess.CompletedProcess, names: str, why: str) -> str:
    """The one line of a refusal; asserts exit 2, no traceback, the file named and the reason."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert names in lines[0] and why in lines[0], lines[0]
    return lines[0]


def site_and_report_refuse(root: Path, names: str, why: str) -> None:
    refused(gabarito(root, "site", "--root", str(root), "--renderer", "smalldocs", "--no-execute"), names, why)
    assert not (root / "_site").exists()
    refused(gabarito(root, "report"), names, why)
    assert not (root / "_site").exists()


def studies_line(root: Path, name: str) -> str:
    proc = gabarito(root, "studies")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return next(line for line in proc.stdout.splitlines() if line.split()[0] == name)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is no longer in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def edit_first_value(path: Path) -> None:
    """Change the first recorded ``"value": 0.x`` of a file (0,519 -> 0,919 in the issue's case)."""
    text = path.read_text(encoding="utf-8")
    edited = re.sub(r'"value": 0\.(\d)', lambda m: f'"value": 0.{(int(m[1]) + 4) % 10}', text, count=1)
    assert edited != text, f"no recorded value in {path}"
    path.write_text(edited, encoding="utf-8")


def test_f1_an_edited_number_in_the_run_log_is_refused_by_site_report_and_studies(project):
    """F1: 0,519 -> 0,919 in the help center's run log was published by site and report (exit 0) and
    studies said `helpcenter current`."""
    log = project / "case-studies" / "helpcenter" / "runs" / "log.jsonl"
    edit_first_value(log)
    site_and_report_refuse(project, "helpcenter/runs/log.jsonl", "modified after its run")
    assert "runs/log.jsonl: modified after its run" in studies_line(project, "helpcenter")


def test_f1_a_run_log_whose_manifest_is_deleted_is_unrecorded(project):
    (project / "case-studies" / "helpcenter" / "runs" / MANIFEST).unlink()
    site_and_report_refuse(project, "helpcenter/runs/log.jsonl", "unrecorded")


def test_f6_an_edited_sample_is_refused_by_site_and_report(project):
    """F6: an edit of benchmark_rrf/sample.json (the seed) was published by site."""
    edit(project / "case-studies" / "benchmark_rrf" / "sample.json", '"seed": 20260817', '"seed": 20260818')
    site_and_report_refuse(project, "benchmark_rrf/sample.json", "modified after its run")
    assert "modified after its run" in studies_line(project, "benchmark_rrf/sample.json")


def test_f7_an_edited_pool_is_refused_by_site_and_report(project):
    """F7: an edit of judgments/pools/pool.json was published by site, and by report after saying
    "modified after it was frozen"."""
    edit(project / "case-studies" / "judgments" / "pools" / "pool.json", '"depth": 10', '"depth": 11')
    site_and_report_refuse(project, "judgments/pools/pool.json", "modified after it was frozen in pools.lock.json")


def test_f8_a_committed_run_folder_without_its_manifest_is_refused(project):
    """F8: deleting a run folder's manifest switched its check off, so an edited run.json was published."""
    folder = project / "case-studies" / "helpcenter" / "runs" / HELPCENTER_RUN
    (folder / MANIFEST).unlink()
    edit(folder / "run.json", '"value": 0.', '"value": 0.9')
    site_and_report_refuse(project, f"{HELPCENTER_RUN}/{MANIFEST}", "missing: nothing records what the run wrote")
    assert "missing" in studies_line(project, "helpcenter")


def test_f8_compare_refuses_a_run_folder_whose_manifest_was_deleted(project, tmp_path):
    """`gabarito compare` on run folders: a folder without its manifest is not taken for an old one."""
    runs = project / "case-studies" / "helpcenter" / "runs"
    folders = sorted(p for p in runs.iterdir() if p.is_dir())
    same = lambda f: json.loads((f / "run.json").read_text(encoding="utf-8"))["evaluation_sha256"]
    a = folders[0]
    b = next(f for f in folders[1:] if same(f) == same(a))  # a run on the same questions
    mine = tmp_path / "mine"
    shutil.copytree(b, mine)
    assert gabarito(project, "compare", str(a), str(mine)).returncode == 0
    (mine / MANIFEST).unlink()
    proc = gabarito(project, "compare", str(a), str(mine))
    refused(proc, str(mine / "run.json"), f"its run folder has no {MANIFEST}")


@pytest.mark.parametrize("manifest", ["case-studies/helpcenter/results.sha256.json",
                                      "case-studies/judgments/pools.lock.json"])
def test_f19_a_manifest_that_is_an_empty_list_is_one_line(project, manifest):
    """F19: a manifest that is `[]` was an AttributeError traceback in studies and site."""
    (project / manifest).write_text("[]", encoding="utf-8")
    proc = gabarito(project, "site", "--root", str(project), "--renderer", "smalldocs", "--no-execute")
    refused(proc, Path(manifest).name, "not a")
    studies = gabarito(project, "studies")
    assert studies.returncode == 0 and "Traceback" not in studies.stderr, studies.stderr
    assert "not a" in studies.stdout


def test_the_committed_tree_passes_the_guard():
    from gabarito.study.integrity import tree_problems
    from gabarito.study.spec import all_studies

    assert list(tree_problems(REPO / "case-studies")) == []
    for spec in all_studies(REPO / "case-studies").values():
        spec.verify_files()


def test_writing_a_manifest_leaves_no_lock_file_in_the_folder(tmp_path):
    """Issue 42: every output folder held an empty `.results.sha256.json.lock`."""
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO), "GABARITO_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "gabarito.cli", "evaluate", "--documents",
                           str(REPO / "data" / "helpcenter" / "docs"), "--evaluation",
                           str(REPO / "data" / "helpcenter" / "evaluation.json"), "--method", "bm25",
                           "--out", str(out), "--log", str(tmp_path / "log.jsonl")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert (out / MANIFEST).is_file() and "run.json" in json.loads((out / MANIFEST).read_text())["files"]
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def test_a_page_loading_an_edited_recorded_file_is_refused(project):
    """The pages' `load_json` (perf.json, judging.json, scaling.json, ...) checks a file its folder's
    manifest records, so a page opened outside the build refuses it too."""
    from gabarito.errors import GabaritoError
    from gabarito.publish.provenance import load_json

    perf = project / "case-studies" / "helpcenter" / "perf.json"
    assert load_json(perf)
    perf.write_text(perf.read_text(encoding="utf-8").replace("{", "{ ", 1), encoding="utf-8")
    with pytest.raises(GabaritoError, match="modified after its run"):
        load_json(perf)
