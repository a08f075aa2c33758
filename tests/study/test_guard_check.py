"""Issue 39 through ``gabarito report --check``: every value is compared except the record of the run,
named by its path (F2); a committed file that no longer matches its manifest is said so (F2); an
interrupted check leaves no temporary folder (F24)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gabarito.hashing import sha256_file
from gabarito.study.volatile import declared, volatile
from gabarito.study.integrity import record

REPO = Path(__file__).resolve().parents[2]

SCRIPT = '''"""A study whose results hold a count named like a cache's and a word's document frequency."""
import os
import time
from pathlib import Path

from gabarito.study.runner import study_main


def run(ctx):
    started = os.environ.get("GUARD_STARTED")
    if started:  # the interruption test: say so, then wait to be stopped
        Path(started).write_text("x")
        time.sleep(120)
    return {"provenance": ctx.provenance(corpus={}, model=None, engine={}, parameters={}),
            "acceptable_misses": {"bm25": {"misses": 80, "of": 400}},
            "df": {"time": 17, "date": 3},
            "cache": {"hits": time.time_ns() % 997, "misses": 5}}


if __name__ == "__main__":
    study_main(__file__, run)
'''


def make_study(d: Path, script: str, env: dict) -> Path:
    """A study ``guard`` in folder ``d`` (empty frozen gold) whose script is ``script``, run once as its
    author would: its results are the committed ones."""
    d.mkdir()
    (d / "gold.json").write_text("[]", encoding="utf-8")
    (d / "gold.lock.json").write_text(json.dumps({"files": {"gold.json": sha256_file(d / "gold.json")}}))
    (d / "run_guard.py").write_text(script, encoding="utf-8")
    (d / "study.json").write_text(json.dumps({"name": "guard", "title": "Guard", "script": "run_guard.py",
                                              "gold": [{"manifest": "gold.lock.json"}], "resamples": 100}))
    done = subprocess.run([sys.executable, str(d / "run_guard.py")], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return d


@pytest.fixture
def study(tmp_path) -> Path:
    return make_study(tmp_path / "guard", SCRIPT, _env(tmp_path))


def _env(tmp_path: Path, **extra: str) -> dict:
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "PYTHONPATH": str(REPO), "GABARITO_CACHE_DIR": str(tmp_path / "cache"),
            "TMPDIR": str(tmp), **extra}


def check(study: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gabarito.cli", "report", "--check", str(study)],
                          env=_env(tmp_path), capture_output=True, text=True, timeout=300)


def verdict(proc: subprocess.CompletedProcess) -> str:
    return next(line for line in proc.stdout.splitlines() if line.startswith("guard/results.json: "))


def test_volatile_keys_are_paths_not_names():
    assert volatile(("provenance",)) and volatile(("groups", "model", "[]", "tuning", "cache", "hits"))
    assert volatile(("embedding_cache", "adi", "mpnet", "queries", "misses"))
    perf = declared("helpcenter/perf.json")
    assert volatile(("rows", "[]", "load_s"), perf) and not volatile(("rows", "[]", "load_s"))
    assert not volatile(("rows", "[]", "tuning", "latency_ms"), perf)  # a timing no declaration names is compared
    assert not volatile(("sets", "main", "acceptable_misses", "bm25", "misses"))
    assert not volatile(("runs", "3.0", "scoring", "per_question", "q1", "df", "time"))
    assert not volatile(("runs", "3.0", "df", "date")) and not volatile(("hits",))


def test_check_compares_a_count_named_misses_and_a_word_named_time(study, tmp_path):
    """F2: `misses` 80 -> 79 was "same numbers, 1 of 1 files reproduced", exit 0."""
    proc = check(study, tmp_path)
    assert proc.returncode == 0 and verdict(proc).startswith("guard/results.json: same numbers"), proc.stdout
    results = study / "results.json"
    text = results.read_text(encoding="utf-8")
    results.write_text(text.replace('"misses": 80', '"misses": 79').replace('"time": 17', '"time": 18'),
                       encoding="utf-8")
    record(results, when="2026-12-07T00:00:00+00:00")  # as if a run had written it: only the values differ
    proc = check(study, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = verdict(proc)
    assert "differs (2 values differ: /acceptable_misses/bm25/misses, /df/time)" in line, line
    assert "0 of 1 files reproduced" in proc.stderr


def test_check_says_the_committed_file_no_longer_matches_its_manifest(study, tmp_path):
    """F2: an edited committed file that a rerun reproduces anyway was never said to be edited."""
    results = study / "results.json"
    data = json.loads(results.read_text(encoding="utf-8"))
    data["cache"]["hits"] += 1  # a volatile value: the comparison alone would call it the same numbers
    results.write_text(json.dumps(data), encoding="utf-8")
    proc = check(study, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = verdict(proc)
    assert line.startswith("guard/results.json: modified (the committed file no longer matches its "
                           "results.sha256.json: modified after its run"), line
    assert "against the rerun: same numbers" in line


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_check_leaves_no_temporary_folder(study, tmp_path, sig, status):
    """F24: `report --check` interrupted left an empty gabarito-check-* folder in the temporary directory."""
    started = tmp_path / "started"
    proc = subprocess.Popen([sys.executable, "-m", "gabarito.cli", "report", "--check", str(study)],
                            env=_env(tmp_path, GUARD_STARTED=str(started)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not started.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    assert [p.name for p in (tmp_path / "tmp").iterdir() if p.name.startswith("gabarito-check-")]
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert "Traceback" not in err
    assert [p.name for p in (tmp_path / "tmp").iterdir()] == []
