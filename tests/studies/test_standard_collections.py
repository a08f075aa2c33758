"""The standard-collections study and its scaling benchmark, run end to end on the small ADI.

Needs the dataset mirror, the packaged models and the embedded ArcadeDB server
(``pytest -m integration tests/test_standard_collections.py``).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.study.records import check_results_gold

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "standard_collections"
pytestmark = pytest.mark.integration

METHODS = {"bm25_arcadedb_standard", "bm25_arcadedb_english", "bm25s", "dense_minilm", "dense_mpnet",
           "dense_mpnet_arcadedb", "rrf_minilm", "rrf_mpnet"}
MEASURES = {"nDCG@10", "AP@100", "R@100", "RR@10", "P@10"}


@pytest.fixture()
def study_copy(tmp_path, mirror):
    if not (Path(mirror) / "adi").exists():
        pytest.skip(f"no ADI in the mirror {mirror}")
    dst = tmp_path / "standard_collections"
    shutil.copytree(STUDY, dst, ignore=shutil.ignore_patterns("results.json", "scaling.json", "runs",
                                                              "__pycache__"))
    return dst


def run(study: Path, script: str, *args: str, timeout: int = 1800):
    return subprocess.run([sys.executable, str(study / script), *args], check=False, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ})


def test_study_on_adi_end_to_end(study_copy, tmp_path, mirror):
    proc = run(study_copy, "run_study.py", "--collections", "adi", "--out", str(study_copy),
               "--db-dir", str(tmp_path / "db"), "--resamples", "500", "--mirror", str(mirror))
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = study_copy / "results.json"
    res = json.loads(path.read_text())

    # gold = the committed qrels file, checked like the flagship's gold
    assert check_results_gold(path) == {"qrels/adi.txt": res["provenance"]["gold_sha256"]["qrels/adi.txt"]}
    qrels = (study_copy / "qrels" / "adi.txt").read_text().splitlines()
    assert len(qrels) == 170 and qrels[0].split()[1] == "0"

    prov = res["provenance"]
    adi_prov = prov["corpus"]["collections"]["adi"]
    assert adi_prov["n_docs"] == 82 and set(adi_prov["files_sha256"]) == {"adi.tar.gz"}
    assert prov["engine"]["version"].startswith("26.10") and prov["engine"]["bm25_k1"] == 1.2
    assert prov["model"]["mpnet"]["weights_sha256"].startswith("78c0197b")
    assert prov["git"]["commit"] and prov["machine"]["cpu_count"] >= 1 and prov["date"]
    assert prov["parameters"]["depth"] == 100 and prov["parameters"]["rrf_k"] == 60

    adi = res["collections"]["adi"]
    assert adi["n_queries"] == 35 and adi["n_judged"] == 35 and adi["excluded"]["count"] == 0
    assert set(adi["metrics"]) == METHODS and set(res["methods"]) == METHODS
    for method, values in adi["metrics"].items():
        assert set(values) == MEASURES
        for measure, value in values.items():
            low, high = adi["ci95"][method][measure]
            assert 0.0 <= low <= value <= high <= 1.0
        assert len(adi["per_query"][method]["nDCG@10"]) == 35
    n_pairs = len(METHODS) * (len(METHODS) - 1) // 2
    for measure in ("nDCG@10", "AP@100"):
        rows = adi["tests"][measure]
        assert len(rows) == n_pairs
        assert all(r["p_holm"] >= r["p_randomization"] and "dz" in r and "p_sign" in r for r in rows)
        assert {(s["a"], s["b"]) for s in adi["significant_after_holm"][measure]} == \
            {(r["a"], r["b"]) for r in rows if r["p_holm"] < 0.05}

    par = adi["parity"]
    for key in ("mean_jaccard", "mean_overlap", "identical_topk_share", "ndcg_diff", "target_met",
                "max_rel_score_diff", "tolerance"):
        assert key in par
    assert par["n_queries"] == 35 and 0.0 <= par["mean_jaccard"] <= 1.0
    assert par["target_met"] == (abs(par["ndcg_diff"]) <= 0.005)
    assert res["parity_summary"]["adi"]["target_met"] == par["target_met"]
    assert 0.5 <= adi["ann"]["recall@10"]["mean"] <= 1.0
    assert adi["rrf_bm25_input"]["chosen"] in {"bm25_arcadedb_standard", "bm25_arcadedb_english"}

    runs = study_copy / "runs"
    first = (runs / "adi.bm25_arcadedb_standard.trec").read_text().splitlines()[0].split()
    assert first[1] == "Q0" and len(first) == 6
    assert {p.name.split(".")[1] for p in runs.glob("adi.*.trec")} == METHODS

    # a second run reuses the ArcadeDB database (same corpus sha and vectors)
    proc = run(study_copy, "run_study.py", "--collections", "adi", "--out", str(study_copy),
               "--db-dir", str(tmp_path / "db"), "--resamples", "200", "--mirror", str(mirror))
    assert proc.returncode == 0, proc.stderr[-3000:]
    again = json.loads(path.read_text())
    state = again["provenance"]["engine"]["databases"]["adi"]["index_state"]
    assert state["standard"] == "reused" and state["english"] == "reused"

    # changed gold: the results are refused, and the study refuses to overwrite the qrels silently
    qfile = study_copy / "qrels" / "adi.txt"
    qfile.write_text(qfile.read_text() + "1 0 1 1\n")
    with pytest.raises(GabaritoError, match="another gold"):
        check_results_gold(path)
    proc = run(study_copy, "run_study.py", "--collections", "adi", "--out", str(study_copy),
               "--db-dir", str(tmp_path / "db"), "--resamples", "200", "--mirror", str(mirror))
    assert proc.returncode == 2 and "differ from the committed file" in proc.stderr


def test_cisi_excluded_queries_are_counted(mirror):
    """CISI has 36 queries without any relevant document: they are left out and counted."""
    from gabarito.inputs.collections import load_collection

    if not (Path(mirror) / "cisi").exists():
        pytest.skip("no CISI in the mirror")
    c = load_collection("cisi", mirror=mirror)
    assert len(c.unjudged) == 36 and len([q for q in c.queries if q.relevant_ids]) == 76


def test_scaling_benchmark_tiny(study_copy, tmp_path, mirror):
    proc = run(study_copy, "bench_scaling.py", "--sizes", "adi", "--synthetic", "2000",
               "--synthetic-large", "1000000", "--budget-s", "60", "--synthetic-base", "adi",
               "--out", str(study_copy), "--db-dir", str(tmp_path / "db"), "--heap", "1g",
               "--mirror", str(mirror))
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((study_copy / "scaling.json").read_text())
    adi = res["real"]["adi"]
    assert adi["n_docs"] == 82 and adi["ingest_s"] > 0 and adi["vector_build_s"] > 0
    for stage in ("http_floor", "bm25", "knn"):
        assert adi["latency_ms"][stage]["n"] >= 20 and adi["latency_ms"][stage]["p95"] >= \
            adi["latency_ms"][stage]["median"] > 0
    assert adi["memory_mb"]["after_build"]["rss_mb"] > 0
    assert 0.5 <= adi["ann_recall"]["mean"] <= 1.0
    assert adi["side_by_side"]["bm25"]["ratio_bm25s_over_arcadedb"] > 0
    assert adi["side_by_side"]["knn"]["ratio_numpy_over_arcadedb"] > 0
    syn = res["synthetic"]["2000"]
    assert syn["n_docs"] == 2000 and syn["ingest_s"] > 0 and syn["vector_build_s"] > 0
    assert set(syn["ann_recall"]) == {"default", "ef200"} and syn["latency_ms"]["knn_ef200"]["n"] >= 20
    assert "1000000" in res["skipped"] and "budget" in res["skipped"]["1000000"]["reason"]
    assert res["fits"]["vector_build_s"]["n_points"] == 2 and "slope" in res["fits"]["knn_median_ms"]
    assert "efSearch" in res["provenance"]["engine"]["efsearch"]["query_time"]
