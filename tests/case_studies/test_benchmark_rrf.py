"""The flagship study, run for real: embedded ArcadeDB, the real corpus, the frozen gold."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.study.records import check_results_gold

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "benchmark_rrf"
pytestmark = pytest.mark.integration


@pytest.fixture()
def study_copy(tmp_path, mirror):
    dst = tmp_path / "benchmark_rrf"
    shutil.copytree(STUDY, dst, ignore=shutil.ignore_patterns("results.json", "runs"))
    return dst


def run(study: Path, *args: str, timeout: int = 1500, env: dict | None = None):
    return subprocess.run([sys.executable, str(study / "run_benchmark.py"), *args],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def test_real_run_writes_complete_results(study_copy, tmp_path):
    proc = run(study_copy, "--db-dir", str(tmp_path / "db"), "--latency-reps", "1", "--resamples", "500")
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads((study_copy / "results.json").read_text())
    check_results_gold(study_copy / "results.json")
    prov = res["provenance"]
    assert prov["corpus"]["n_docs"] == 1388
    assert prov["model"]["weights_sha256"] == "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
    assert prov["engine"]["version"].startswith("26.10")
    assert prov["git"]["commit"] and prov["machine"]["cpu_count"] >= 1
    main = res["sets"]["main"]
    assert main["n"] == 40 and len(main["per_question"]) == 40 and res["sets"]["extended"]["n"] >= 160
    for method in ("bm25", "vector", "rrf@10", "rrf@100"):
        for value in main["metrics"][method].values():
            assert 0.0 <= value <= 1.0
    assert sum(main["overlap_top1"].values()) == 40
    assert 0.5 <= main["ann"]["mean"] <= 1.0
    for stage in ("http_floor", "bm25", "encode", "knn", "vector_full", "hybrid_full"):
        assert res["latency_ms"][stage]["n"] >= 20 and res["latency_ms"][stage]["median"] > 0
    assert "SEARCH_INDEX" in res["queries"]["bm25"] and ":q" in res["queries"]["bm25"]
    assert "vector.neighbors" in res["queries"]["knn"] and ":v" in res["queries"]["knn"]
    assert prov["parameters"]["seed"] == 20260817 and prov["parameters"]["bootstrap_resamples"] == 500
    assert res["methods"] == ["bm25", "vector", "rrf@10", "rrf@100"]
    assert res["timings"]["state"] == "cold" and res["provenance"]["engine"]["index_state"] == "built"
    assert {"searches", "latency"} <= set(res["phases_s"])
    assert set(res["sets"]) == {"main", "extended", "published", "name_only", "disjoint"}
    assert all(res["sets"][k]["n"] == 80 for k in ("name_only", "disjoint")) and res["sets"]["published"]["n"] == 40
    # the committed reproduction still agrees where it agreed (vector ranks are stable run to run)
    committed = json.loads((STUDY / "results.json").read_text())["reproduction"]["ranks"]["rows"]
    now = {r["id"]: r for r in res["reproduction"]["ranks"]["rows"]}
    for method in ("bm25", "vector", "rrf"):
        agreed = [r["id"] for r in committed if r[method]["agrees"]]
        assert agreed and all(now[q][method]["agrees"] for q in agreed), method
    assert res["reproduction"]["ranks"]["agree"]["vector"] >= len([r for r in committed if r["vector"]["agrees"]])
    runs = study_copy / "runs"
    assert (runs / "bm25.trec").read_text().splitlines()[0].split()[1] == "Q0"
    for name in ("vector.trec", "rrf_at_10.trec", "rrf_at_100.trec", "qrels.main.txt", "qrels.extended.txt"):
        assert (runs / name).stat().st_size > 0

    # warm rerun: vectors cached, database reopened from its files
    proc = run(study_copy, "--db-dir", str(tmp_path / "db"), "--latency-reps", "1", "--resamples", "500")
    assert proc.returncode == 0, proc.stderr[-2000:]
    warm = json.loads((study_copy / "results.json").read_text())
    assert warm["timings"]["state"] == "warm" and warm["provenance"]["engine"]["index_state"] == "reused"
    assert warm["timings"]["embedding_cache"]["misses"] == 0
    assert warm["sets"]["main"]["metrics"] == res["sets"]["main"]["metrics"]


def test_refuses_gold_edited_after_freezing(study_copy):
    q = study_copy / "questions.json"
    q.write_text(q.read_text().replace("homeowners", "house owners", 1))
    proc = run(study_copy, timeout=120)
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()[-1]
    assert "gold changed after it was frozen" in err and "questions.json" in err
    assert not (study_copy / "results.json").exists()


def test_cutoff_must_be_below_depth(study_copy):
    proc = run(study_copy, "--k", "10", "--deep-k", "10", timeout=120)
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()[-1]
    assert "--cutoff" in err and "--depth" in err
    assert not (study_copy / "results.json").exists()


def test_unreachable_server_is_a_clear_error_and_writes_nothing(study_copy):
    proc = run(study_copy, "--arcadedb-url", "http://127.0.0.1:9", timeout=600,
               env={"GABARITO_ARCADEDB_USER": "root", "GABARITO_ARCADEDB_PASSWORD": "not-a-real-one"})
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()[-1]
    assert "127.0.0.1:9" in err and "not reachable" in err
    assert not (study_copy / "results.json").exists()
    assert not (study_copy / "runs").exists()
