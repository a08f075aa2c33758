"""Issue 39, the independent attack: each case through the ``gabarito`` command in a subprocess.

N1 ``$GABARITO_LEGACY_FOLDERS`` naming a committed run folder switched the site's guard off; N3 a
run folder whose ``run.trec`` and manifest were both rewritten was compared as measured; N4/N5
``judge --out`` replaced a grades file, a FIFO; N7 a signal during a lazy import was a traceback;
N8 ``--resamples`` had no upper limit.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gabarito.study.integrity import MANIFEST

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "judging"))
sys.path.insert(0, str(REPO / "tests" / "study"))
from judging_fixtures import make_collection  # noqa: E402
from test_guard_files import pristine, project  # noqa: E402,F401 - fixtures: a copy of the project


def gabarito(*args, cwd: Path, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "gabarito.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def one_line(proc: subprocess.CompletedProcess, code: int, *words: str) -> str:
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


# --- N1: the variable is for compare's user folders, never the committed report's guard ----------

def test_n1_the_legacy_variable_does_not_switch_the_site_guard_off(project):
    runs = project / "case-studies" / "helpcenter" / "runs"
    folder = sorted(p for p in runs.iterdir() if (p / "run.json").is_file())[0]
    (folder / MANIFEST).unlink()
    text = (folder / "run.json").read_text(encoding="utf-8")
    assert '"value": 0.' in text
    (folder / "run.json").write_text(text.replace('"value": 0.', '"value": 0.9', 1), encoding="utf-8")
    env = {"PYTHONPATH": str(project), "GABARITO_CACHE_DIR": str(project / ".cache"),
           "GABARITO_LEGACY_FOLDERS": str(folder)}
    proc = gabarito("site", "--root", project, "--renderer", "smalldocs", "--no-execute", cwd=project, env=env)
    one_line(proc, 2, f"{folder.name}/{MANIFEST}", "missing: nothing records what the run wrote")
    assert not (project / "_site").exists()
    studies = gabarito("studies", cwd=project, env=env)
    assert studies.returncode == 0, studies.stderr
    assert "missing" in next(line for line in studies.stdout.splitlines() if line.split()[0] == "helpcenter")


def test_n8_study_refuses_resamples_above_the_limit(project):
    env = {"PYTHONPATH": str(project), "GABARITO_CACHE_DIR": str(project / ".cache")}
    proc = gabarito("study", "helpcenter", "--resamples", "100000000000", cwd=project, env=env, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    # the study script's one line (the command adds none after it)
    assert "--resamples must be at least 100" in proc.stderr and "at most 1,000,000" in proc.stderr, proc.stderr


# --- N3: a lying manifest in a user's run folder ---------------------------------------------------

def _rewrite_manifest(path: Path) -> None:
    manifest = path.parent / MANIFEST
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["files"][path.name]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _swap_first_two_of_a_query(run_trec: Path, qrels_trec: Path) -> str:
    """Swap the documents at ranks 1 and 2 of the first query where exactly one of them is relevant."""
    relevant = {(q, d) for q, _, d, g in (line.split() for line in qrels_trec.read_text().splitlines()) if int(g) >= 1}
    lines = run_trec.read_text().splitlines()
    for i in range(len(lines) - 1):
        a, b = lines[i].split(), lines[i + 1].split()
        if a[0] == b[0] and a[3] == "1" and b[3] == "2" and ((a[0], a[2]) in relevant) != ((b[0], b[2]) in relevant):
            a[2], b[2] = b[2], a[2]
            lines[i], lines[i + 1] = " ".join(a), " ".join(b)
            run_trec.write_text("\n".join(lines) + "\n")
            return a[0]
    raise AssertionError("no query to swap")


def test_n3_compare_refuses_ranked_lists_that_do_not_give_the_recorded_means(tmp_path):
    source = next(p.parent for p in sorted((REPO / "case-studies" / "helpcenter" / "runs").glob("*/run.json"))
                  if json.loads(p.read_text(encoding="utf-8")).get("trec"))
    base, lie = tmp_path / "base", tmp_path / "blie"
    shutil.copytree(source, base)
    shutil.copytree(source, lie)
    ok = gabarito("compare", base, lie, "--measure", "nDCG@10", cwd=tmp_path)
    assert ok.returncode == 0 and "Traceback" not in ok.stderr, ok.stderr
    _swap_first_two_of_a_query(lie / "run.trec", lie / "qrels.trec")
    _rewrite_manifest(lie / "run.trec")
    proc = gabarito("compare", base, lie, "--measure", "nDCG@10", cwd=tmp_path)
    one_line(proc, 2, str(lie / "run.trec"), "does not give the means run.json recorded")
    assert "nDCG@10" not in proc.stdout


# --- N4, N5: judge never replaces what is not its own page ---------------------------------------

@pytest.fixture
def pool(tmp_path) -> Path:
    coll = make_collection(tmp_path)
    out = tmp_path / "pool.json"
    done = gabarito("pool", *coll["runs"], "--documents", coll["documents"], "--evaluation", coll["evaluation"],
                    "--seed", "1", "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return out


def test_n4_judge_refuses_to_replace_a_grades_file_and_replaces_its_own_page(pool, tmp_path):
    grades = tmp_path / "ga_copy.json"
    grades.write_text('{"schema": "gabarito.grades/1", "assessor": "Ana", "grades": [{"pair": "p1", "grade": 2}]}')
    before = grades.read_bytes()
    proc = gabarito("judge", pool, "--assessor", "Ana", "--out", grades, cwd=tmp_path)
    one_line(proc, 2, str(grades), "already exists and is not a judging page")
    assert grades.read_bytes() == before
    page = tmp_path / "ana.html"
    assert gabarito("judge", pool, "--assessor", "Ana", "--out", page, cwd=tmp_path).returncode == 0
    again = gabarito("judge", pool, "--assessor", "Ana Maria", "--out", page, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "Ana Maria" in page.read_text(encoding="utf-8")


def test_n5_no_out_replaces_a_fifo(pool, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    judge = gabarito("judge", pool, "--assessor", "Ana", "--out", fifo, cwd=tmp_path)
    one_line(judge, 2, str(fifo), "is not a regular file")
    pool_proc = gabarito("pool", tmp_path / "a.trec", "--seed", "1", "--out", fifo, cwd=tmp_path)
    one_line(pool_proc, 2, str(fifo), "already exists")
    grades = tmp_path / "g.json"
    grades.write_text("{}")
    imp = gabarito("judgments", "import", grades, "--pool", pool, "--out", fifo, cwd=tmp_path)
    one_line(imp, 2, str(fifo), "is not a folder")
    assert fifo.is_fifo()


# --- N8: --resamples has an upper limit ---------------------------------------------------------

def test_n8_import_refuses_resamples_above_the_limit(pool, tmp_path):
    grades = tmp_path / "g.json"
    grades.write_text("{}")
    start = time.monotonic()
    proc = gabarito("judgments", "import", grades, "--pool", pool, "--out", tmp_path / "out",
                    "--resamples", "100000000000", cwd=tmp_path, timeout=60)
    one_line(proc, 2, "--resamples must be at least 100", "at most 1,000,000")
    assert time.monotonic() - start < 60 and not (tmp_path / "out").exists()


# --- N7: a signal during a lazy import is one line, never a traceback ----------------------------

SLOW_PANDAS = '''
import os, time
if os.path.exists(os.environ["SLOW_IMPORT_MARK"]):  # imported again after a caller swallowed the first failure
    raise AttributeError("partially initialized module 'pandas' has no attribute 'DataFrame'")
open(os.environ["SLOW_IMPORT_MARK"], "w").close()
try:
    time.sleep(30)
except BaseException:  # what numpy does with a failure inside its import: a new error
    raise ImportError("numpy._core.multiarray failed to import")
'''


def _default_sigint() -> None:
    """Ctrl-C as a terminal's child gets it (a shell's background job inherits it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig, code, words", [(signal.SIGINT, 130, "gabarito: interrupted"),
                                              (signal.SIGTERM, 143, "gabarito: stopped by SIGTERM")])
def test_n7_a_signal_during_a_lazy_import_is_one_line(tmp_path, sig, code, words):
    """A stand-in for pandas (imported lazily by ``pool``) sleeps; the signal comes mid-import and the
    module fails in its own words, as pandas and numpy do: still one line and the signal's status."""
    fake = tmp_path / "fake" / "pandas"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(SLOW_PANDAS)
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 d1 1 1.0 x\n")
    for attempt in range(2):
        mark = tmp_path / f"mark{attempt}"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "fake"), str(REPO)]),
               "SLOW_IMPORT_MARK": str(mark)}
        proc = subprocess.Popen([sys.executable, "-m", "gabarito.cli", "pool", str(run), "--seed", "1", "--out",
                                 str(tmp_path / f"p{attempt}.json"), "--documents", str(run), "--evaluation", str(run)],
                                cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=_default_sigint)
        try:
            deadline = time.monotonic() + 30
            while not mark.exists():
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline
                time.sleep(0.02)
            time.sleep(0.05 * attempt)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        one_line(done, code, words)
        assert not (tmp_path / f"p{attempt}.json").exists()
