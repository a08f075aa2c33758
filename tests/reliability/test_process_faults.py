"""Issue 39: faults of the process and its surroundings, driven through the ``gabarito`` command.

A signal during ``gabarito evaluate`` (F24), a closed output (F20), an ``OSError`` or a
``RecursionError`` anywhere (F13), a GPU that torch does not see (F15), an ArcadeDB timeout that
is no finite number of seconds (F16), and a reused database whose stored ``doc_id`` was garbled
(F25, integration: a real embedded server). The secrets of the ArcadeDB server (F11, F12):
``test_secrets.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.reliability.test_index_integrity import DOCS, evaluate as evaluate_bm25_arcadedb
from tests.reliability.test_reliability_cli import (PY, assert_one_line_error, evaluate, gabarito,  # noqa: F401
                                                    project)

ROOT = Path(__file__).resolve().parents[2]

# Runs the command with the staged run folder's writing slowed down: once its files are written
# (the run folder not yet renamed into place), a marker file appears and the run waits there.
SLOW_WRITE = """
import pathlib, sys, time
from gabarito.evaluation import runlog
marker = pathlib.Path(sys.argv.pop())
real = runlog._write_files
def slow(folder, *args, **kwargs):
    real(folder, *args, **kwargs)
    marker.write_text(str(folder))
    time.sleep(120)
runlog._write_files = slow
from gabarito.cli import entry
raise SystemExit(entry())
"""

# The same, stopped between the run folder's reservation and its writing.
SLOW_RESERVED = """
import pathlib, sys, time
from gabarito.evaluation import runlog
marker = pathlib.Path(sys.argv.pop())
real = runlog.write_run
def slow(record, out_dir, log_path):
    marker.write_text(str(out_dir))
    time.sleep(120)
runlog.write_run = slow
import gabarito.evaluation
gabarito.evaluation.write_run = slow
from gabarito.cli import entry
raise SystemExit(entry())
"""


def _stopped_while(project: Path, hook: str, sig: signal.Signals) -> tuple[subprocess.CompletedProcess, str]:
    """``gabarito evaluate`` (BM25 in memory) under ``hook``, sent ``sig`` once the hook's marker
    appears; returns the finished process and what the marker named."""
    marker = project / "marker"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GABARITO_CACHE_DIR": str(project / "cache")}
    argv = [PY, "-c", hook, "evaluate", "--documents", "docs", "--evaluation", "evaluation.json",
            "--log", "runs/log.jsonl", "--method", "bm25", str(marker)]
    proc = subprocess.Popen(argv, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 240
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never reached the hook"
        time.sleep(0.1)
    named = marker.read_text()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), named


# -- F24: SIGTERM / SIGINT during gabarito evaluate -------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_the_run_folder_is_written_leaves_no_reserved_folder_and_no_temporaries(project, sig):
    """Before: SIGTERM while the run was written left the empty reserved ``runs/<id>/`` and the
    staged ``runs/.<id>.*.tmp`` with every file of the run (59 MB on a large collection)."""
    done, staged = _stopped_while(project, SLOW_WRITE, sig)
    assert done.returncode == 128 + sig, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] in ("gabarito: stopped by SIGTERM", "gabarito: interrupted")
    assert Path(staged).name.endswith(".tmp")  # the hook saw the staged folder, full of the run's files
    assert not Path(staged).exists()
    runs = project / "runs"
    assert not runs.exists() or list(runs.iterdir()) == []  # no run folder, no staged copy, no log


def test_sigterm_between_the_reservation_and_the_writing_removes_the_reserved_folder(project):
    """The reserved (empty) ``runs/<id>/`` is removed on the way out even before the run is written."""
    done, reserved = _stopped_while(project, SLOW_RESERVED, signal.SIGTERM)
    assert done.returncode == 143 and "Traceback" not in done.stderr, done.stderr
    assert Path(reserved).parent.name == "runs"
    assert not Path(reserved).exists()
    assert list((project / "runs").iterdir()) == []


# -- F20: output piped into head --------------------------------------------------------------------

def test_a_closed_output_ends_quietly_with_141(project):
    """Before: ``gabarito studies | head -1`` -> ``BrokenPipeError`` traceback, exit 1, after the work."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GABARITO_CACHE_DIR": str(project / "cache")}
    proc = subprocess.Popen([PY, "-m", "gabarito.cli", "studies"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does after its line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141, err
    assert first.strip() and err == "", err


# -- F13: OSError and RecursionError anywhere --------------------------------------------------------

def test_an_os_error_is_one_line_naming_the_path_asked_for(project):
    """Before: ``compare --out <a folder>`` -> ``IsADirectoryError`` traceback naming a temporary
    file (``/tmp/.d.qrdr9nkh.tmp -> /tmp/d``); ``--out /proc/x.html`` -> ``FileNotFoundError``."""
    done = evaluate(project)
    assert done.returncode == 0, done.stderr
    run = next((project / "runs").glob("*/run.json"))
    (project / "page").mkdir()

    def error_line(done: subprocess.CompletedProcess) -> str:  # compare also warns: same settings twice
        errors = [line for line in done.stderr.splitlines() if not line.startswith("gabarito: warning: ")]
        assert done.returncode == 2 and "Traceback" not in done.stderr and len(errors) == 1, done.stderr
        return errors[0]

    line = error_line(gabarito("compare", str(run), str(run), "--out", "page", cwd=project))
    assert line == "gabarito: error: page: Is a directory"
    assert not list(project.glob(".page.*"))  # the temporary file is gone
    line = error_line(gabarito("compare", str(run), str(run), "--out", "/proc/gabarito-cmp.html", cwd=project))
    assert line == "gabarito: error: /proc/gabarito-cmp.html: No such file or directory"


def test_a_recursion_error_is_one_line(project):
    """Any ``RecursionError`` that reaches the command is one line and exit 2, never a traceback."""
    hook = ("import sys\nfrom gabarito import cli\n"
            "def deep(args):\n    return deep(args)\n"
            "cli.dispatch = deep\nraise SystemExit(cli.entry())")
    done = subprocess.run([PY, "-c", hook, "studies"], cwd=project, capture_output=True, text=True, timeout=300)
    assert_one_line_error(done, "nested too deeply")


# -- F15: a device torch does not see -----------------------------------------------------------------

def test_a_gpu_torch_does_not_see_is_one_line_before_any_work(project):
    """Before: ``--device cuda`` on a CPU build of torch -> a 60-line ``AssertionError``
    ("Torch not compiled with CUDA enabled") once the model loaded."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    started = time.monotonic()
    done = evaluate(project, "--device", "cuda:0")
    line = assert_one_line_error(done, "device 'cuda:0'", "sees no CUDA device", "--device cpu")
    assert "Traceback" not in line and not (project / "runs").exists()
    assert time.monotonic() - started < 120


def test_a_study_asked_for_a_gpu_torch_does_not_see_stops_before_its_gold_check(project):
    """The shared ``--device`` of the study scripts: the study's one error line first (the runner
    adds the line naming the script), before the gold check and any work."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    done = gabarito("study", "benchmark_rrf", "--device", "cuda", cwd=project)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[0].startswith("error: device 'cuda': torch ")
    assert "sees no CUDA device here" in done.stderr.splitlines()[0]


# -- F16: GABARITO_ARCADEDB_TIMEOUT -----------------------------------------------------------------

@pytest.mark.parametrize("value", ["inf", "1e12", "nan", "-5"])
def test_an_arcadedb_timeout_that_is_no_sane_number_of_seconds_is_one_line(project, value):
    """Before: ``inf`` and ``1e12`` -> ``OverflowError: timestamp out of range`` traceback from the
    socket; now one line before any server starts."""
    done = subprocess.run([PY, "-m", "gabarito.cli", "evaluate", "--documents", "docs", "--evaluation",
                           "evaluation.json", "--log", "runs/log.jsonl", "--method", "bm25", "--engine", "arcadedb",
                           "--db-dir", "db"], cwd=project, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "GABARITO_CACHE_DIR": str(project / "cache"),
                               "GABARITO_ARCADEDB_TIMEOUT": value})
    assert_one_line_error(done, "GABARITO_ARCADEDB_TIMEOUT", "at most 86400")
    assert not (project / "db").exists() and not (project / "runs" / "log.jsonl").exists()


# -- F25: a garbled doc_id in a reused database (a real embedded server) ---------------------------

@pytest.mark.integration
def test_a_garbled_doc_id_in_a_reused_database_is_rebuilt_with_one_notice(tmp_path):
    """Before: the database with ``prazos-e-frete#0002`` garbled in its bucket (a record outside
    the sampled ones and the probes' answers) was reused ("index reused (75 chunks)"), then every
    run stopped with ``KeyError: 'prazos-e-frete#0O02'`` (a traceback that named neither the
    database nor its folder)."""
    if not DOCS.is_dir():
        pytest.skip("no help-center data")
    db, cache = tmp_path / "db", tmp_path / "cache"
    env = {"GABARITO_CACHE_DIR": str(cache)}
    clean = evaluate_bm25_arcadedb(db, tmp_path / "clean.jsonl", env=env)
    assert clean.returncode == 0, clean.stderr
    (bucket,) = (db / "databases").glob("eval_*/Chunk_0.*.bucket")
    data = bucket.read_bytes()
    assert data.count(b"prazos-e-frete#0002") == 1
    bucket.write_bytes(data.replace(b"prazos-e-frete#0002", b"prazos-e-frete#0O02"))
    log = tmp_path / "log.jsonl"
    again = evaluate_bm25_arcadedb(db, log, env=env)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    notices = [line for line in again.stderr.splitlines() if "not whole" in line]
    assert len(notices) == 1 and "'prazos-e-frete#0O02', which its build did not write" in notices[0]
    assert "index built" in again.stderr
    first = json.loads((tmp_path / "clean.jsonl").read_text(encoding="utf-8").splitlines()[0])
    rerun = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    assert [r["returned"] for r in rerun["per_query"]] == [r["returned"] for r in first["per_query"]]
    third = evaluate_bm25_arcadedb(db, log, env=env)  # what was rebuilt is whole: reused as such
    assert third.returncode == 0 and "index reused" in third.stderr, third.stderr
    shutil.rmtree(db, ignore_errors=True)


def test_a_study_script_ends_an_os_error_in_one_line_and_a_closed_output_quietly(tmp_path):
    """``run_main``, every study script's wrapper: the same rules as the ``gabarito`` command."""
    failing = tmp_path / "failing.py"
    failing.write_text("from gabarito.errors import run_main\n\ndef main(argv):\n"
                       "    open('/proc/no-such-dir/out.json', 'w')\n\nrun_main(main)\n")
    done = subprocess.run([PY, str(failing)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr == "error: /proc/no-such-dir/out.json: No such file or directory\n"
    chatty = tmp_path / "chatty.py"
    chatty.write_text("from gabarito.errors import run_main\n\ndef main(argv):\n"
                      "    for i in range(200000):\n        print('line', i)\n    return 0\n\nrun_main(main)\n")
    proc = subprocess.Popen([PY, str(chatty)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == "", err
