"""Results integrity: a results file changed after its run is refused, in one line naming it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.study.integrity import MANIFEST, read_manifest, state, verify
from gabarito.study.records import check_results_gold, write_measurement, write_results

REPO = Path(__file__).resolve().parents[2]


def copy_project(dest: Path) -> Path:
    """What `gabarito site` reads: the config, the pages, the studies and the data."""
    import shutil

    dest.mkdir(parents=True)
    for name in ("_quarto.yml", "index.ipynb"):
        shutil.copy(REPO / name, dest / name)
    for name in ("notebooks", "case-studies", "data"):
        shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    return dest


def _results(tmp_path: Path, value: float = 0.5192) -> Path:
    gold = tmp_path / "q.json"
    gold.write_text('{"pairs": []}', encoding="utf-8")
    return write_results(tmp_path / "results.json", {
        "provenance": {"gold_sha256": {"q.json": sha256_file(gold)}}, "metrics": {"mrr": value}})


def test_the_writer_records_the_sha256_and_a_reader_accepts_it(tmp_path):
    path = _results(tmp_path)
    entry = read_manifest(tmp_path / MANIFEST)["results.json"]
    assert entry["sha256"] == sha256_file(path)
    assert state(path) is None
    assert check_results_gold(path) == {"q.json": sha256_file(tmp_path / "q.json")}


def test_one_digit_changed_by_hand_is_refused_naming_the_file(tmp_path):
    path = _results(tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace("0.5192", "0.9192"), encoding="utf-8")
    assert state(path).startswith("modified after its run")
    with pytest.raises(GabaritoError) as err:
        check_results_gold(path)
    msg = str(err.value)
    assert str(path) in msg and "modified after its run" in msg and "\n" not in msg


def test_a_results_file_no_run_recorded_is_refused(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"provenance": {"gold_sha256": {}}}), encoding="utf-8")
    with pytest.raises(GabaritoError, match="no run recorded it"):
        verify(path)


def test_a_rerun_records_the_new_file_and_keeps_the_other_entries(tmp_path):
    first = _results(tmp_path)
    write_measurement(tmp_path / "perf.json", {"date": "d", "git": {}, "median_s": 1.0})
    _results(tmp_path, value=0.6)
    files = read_manifest(tmp_path / MANIFEST)
    assert set(files) == {"results.json", "perf.json"}
    assert files["results.json"]["sha256"] == sha256_file(first) and state(tmp_path / "perf.json") is None


def test_a_damaged_manifest_is_one_line(tmp_path):
    path = _results(tmp_path)
    (tmp_path / MANIFEST).write_text("{not json", encoding="utf-8")
    with pytest.raises(GabaritoError, match="results manifest is not valid JSON"):
        verify(path)


def test_every_committed_results_file_is_the_one_its_run_recorded():
    from gabarito.publish.site.gold import results_files

    for path, _ in results_files(REPO):
        assert state(path) is None, f"{path}: {state(path)}"


def _gabarito(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "gabarito.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _first_value_edited(text: str) -> str:
    """The first recorded ``"value": 0.x`` changed (0,519 -> 0,919 in the issue's case)."""
    edited = re.sub(r'"value": 0\.(\d)', lambda m: f'"value": 0.{(int(m[1]) + 4) % 10}', text, count=1)
    assert edited != text, "no recorded value in the help-center results"
    return edited


@pytest.mark.integration
def test_gabarito_site_refuses_a_hand_edited_results_file(tmp_path):
    """The issue's case: one MRR of the help-center results changed from 0.5192… to 0.9192…."""
    root = copy_project(tmp_path / "proj")
    results = root / "case-studies" / "helpcenter" / "results.json"
    text = results.read_text(encoding="utf-8")
    edited = _first_value_edited(text)
    results.write_text(edited, encoding="utf-8")
    done = _gabarito("site", "--root", str(root), "--renderer", "smalldocs", "--no-execute", cwd=root)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "helpcenter/results.json" in errors[0] and "modified after its run" in errors[0]
    assert "Traceback" not in done.stderr
    assert not (root / "_site").exists()


def test_gabarito_report_refuses_and_studies_shows_a_hand_edited_results_file(tmp_path):
    """`gabarito report` stops before any study or page runs; `gabarito studies` says modified."""
    import shutil

    root = copy_project(tmp_path / "proj")
    shutil.copytree(REPO / "gabarito", root / "gabarito", ignore=shutil.ignore_patterns("__pycache__"))
    results = root / "case-studies" / "helpcenter" / "results.json"
    results.write_text(_first_value_edited(results.read_text(encoding="utf-8")), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(root)}
    report = subprocess.run([sys.executable, "-m", "gabarito.cli", "report"], cwd=root, env=env,
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 2, report.stderr
    lines = report.stderr.strip().splitlines()
    assert len(lines) == 1 and "helpcenter/results.json" in lines[0] and "modified after its run" in lines[0]
    assert not (root / "_site").exists()
    studies = subprocess.run([sys.executable, "-m", "gabarito.cli", "studies"], cwd=root, env=env,
                             capture_output=True, text=True, timeout=300)
    helpcenter = [line for line in studies.stdout.splitlines() if line.startswith("helpcenter ")]
    assert helpcenter and "modified after its run" in helpcenter[0], studies.stdout
