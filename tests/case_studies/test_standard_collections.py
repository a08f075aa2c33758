"""The standard-collections study and its scaling benchmark, run end to end on the small ADI.

Needs the dataset mirror, the packaged models and the embedded ArcadeDB server
(``pytest -m integration tests/case_studies/test_standard_collections.py``).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.inputs.gold import freeze
from gabarito.study.records import check_results_gold
from gabarito.measure.report import ALPHA, SCHEMA, Report

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


def run(study: Path, script: str, *args: str, timeout: int = 1800, env: dict | None = None):
    return subprocess.run([sys.executable, str(study / script), *args], check=False, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def adi(study_copy, tmp_path, mirror, *extra):
    return run(study_copy, "run_study.py", "--collections", "adi", "--out", str(study_copy),
               "--db-dir", str(tmp_path / "db"), "--mirror", str(mirror), *extra)


def check_scores(col: dict) -> None:
    assert set(col["metrics"]) == METHODS
    for method, values in col["metrics"].items():
        assert set(values) == MEASURES
        for measure, value in values.items():
            low, high = col["ci95"][method][measure]
            assert 0.0 <= low <= value <= high <= 1.0
            per_query = col["per_query"][method][measure]
            assert len(per_query) == col["n_judged"]
            assert value == pytest.approx(sum(per_query.values()) / len(per_query), abs=1e-12)
    n_pairs = len(METHODS) * (len(METHODS) - 1) // 2
    for measure in ("nDCG@10", "AP@100"):
        assert col["schema"] == SCHEMA
        rows = [r for r in col["tests"] if r["measure"] == measure]
        assert len(rows) == n_pairs
        assert all(r["p_holm"] >= r["p_randomization"] and "dz" in r and "p_sign" in r for r in rows)
        assert {(s["a"], s["b"]) for s in col["significant_after_holm"][measure]} == \
            {(r["a"], r["b"]) for r in rows if r["p_holm"] < ALPHA}


def test_study_on_adi_end_to_end(study_copy, tmp_path, mirror):
    proc = adi(study_copy, tmp_path, mirror, "--resamples", "500")
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = study_copy / "results.json"
    res = json.loads(path.read_text())
    assert res["study"] == "standard_collections" and res["wall_s"] > 0
    assert any(k.startswith("adi/") for k in res["phases_s"])

    # gold = the frozen qrels file of the collection searched, nothing else
    assert check_results_gold(path) == {"qrels/adi.txt": res["provenance"]["gold_sha256"]["qrels/adi.txt"]}
    qrels = (study_copy / "qrels" / "adi.txt").read_text().splitlines()
    assert len(qrels) == 170 and qrels[0].split()[1] == "0"

    prov = res["provenance"]
    adi_prov = prov["corpus"]["collections"]["adi"]
    assert adi_prov["n_docs"] == 82 and set(adi_prov["files_sha256"]) == {"adi.tar.gz"}
    assert prov["engine"]["version"].startswith("26.10") and prov["engine"]["bm25_k1"] == 1.2
    assert prov["model"]["mpnet"]["weights_sha256"].startswith("78c0197b")
    assert prov["git"]["commit"] and prov["machine"]["cpu_count"] >= 1 and prov["date"]
    params = prov["parameters"]
    assert params["depth"] == 100 and params["rrf_k"] == 60
    assert params["seed"] == 20260817 and params["bootstrap_resamples"] == 500  # from study.json / --resamples

    col = res["collections"]["adi"]
    assert col["n_queries"] == 35 and col["n_judged"] == 35 and col["excluded"]["count"] == 0
    assert set(res["methods"]) == METHODS
    check_scores(col)

    par = col["parity"]
    assert par["n_queries"] == 35 and 0.0 <= par["mean_jaccard"] <= 1.0
    assert par["target_met"] == (abs(par["ndcg_diff"]) <= 0.005)
    assert res["parity_summary"]["adi"]["target_met"] == par["target_met"]
    assert 0.5 <= col["ann"]["recall@10"]["mean"] <= 1.0 and col["ann"]["recall@100"]["k"] == 100
    chosen = col["rrf_bm25_input"]["chosen"]
    assert chosen in {"bm25_arcadedb_standard", "bm25_arcadedb_english"}
    assert col["rrf_bm25_input"]["ndcg@10"][chosen] == max(col["rrf_bm25_input"]["ndcg@10"].values())

    runs = study_copy / "runs"
    first = (runs / "adi.bm25_arcadedb_standard.trec").read_text().splitlines()[0].split()
    assert first[1] == "Q0" and first[3] == "1" and first[5] == "gabarito-bm25_arcadedb_standard"
    assert {p.name.split(".")[1] for p in runs.glob("adi.*.trec")} == METHODS

    # a second run reuses both ArcadeDB indexes (same corpus, vectors and analyzer); --cold rebuilds them
    proc = adi(study_copy, tmp_path, mirror, "--resamples", "200")
    assert proc.returncode == 0, proc.stderr[-3000:]
    again = json.loads(path.read_text())
    assert again["provenance"]["engine"]["databases"]["adi"]["index_state"] == {"standard": "reused",
                                                                               "english": "reused"}
    assert again["collections"]["adi"]["metrics"] == col["metrics"]  # resamples change intervals, not means
    proc = adi(study_copy, tmp_path, mirror, "--resamples", "200", "--cold")
    assert proc.returncode == 0, proc.stderr[-3000:]
    cold = json.loads(path.read_text())
    assert cold["provenance"]["engine"]["databases"]["adi"]["index_state"] == {"standard": "built",
                                                                              "english": "built"}
    assert cold["collections"]["adi"]["metrics"] == col["metrics"]

    # the qrels beside the results changed: the results are refused
    qfile = study_copy / "qrels" / "adi.txt"
    qfile.write_text(qfile.read_text() + "1 0 1 1\n")
    with pytest.raises(GabaritoError, match="another gold"):
        check_results_gold(path)


def test_study_refuses_changed_gold(study_copy, tmp_path, mirror):
    qfile = study_copy / "qrels" / "adi.txt"
    original = qfile.read_text()
    qfile.write_text(original + "1 0 1 1\n")
    # edited after the freeze: the runner stops before anything runs
    proc = adi(study_copy, tmp_path, mirror)
    assert proc.returncode == 2 and "gold changed after it was frozen" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (study_copy / "results.json").exists()
    # frozen again, but no longer what the loader reads from the collection: refused before any search
    lock = study_copy / "gold.lock.json"
    freeze(lock, [study_copy / rel for rel in json.loads(lock.read_text())["files"]], note="test")
    proc = adi(study_copy, tmp_path, mirror)
    assert proc.returncode == 2 and "differ from the frozen file" in proc.stderr
    assert "adi/encode" not in proc.stderr and not (tmp_path / "db").exists()


def test_unknown_collection_is_one_line(study_copy, tmp_path, mirror):
    proc = run(study_copy, "run_study.py", "--collections", "adi,nope", "--db-dir", str(tmp_path / "db"),
               "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "unknown collection(s) ['nope']" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_cisi_excluded_queries_are_counted(mirror):
    """CISI has 36 queries without any relevant document: they are left out and counted."""
    from gabarito.inputs.collections import load_collection

    if not (Path(mirror) / "cisi").exists():
        pytest.skip("no CISI in the mirror")
    c = load_collection("cisi", mirror=mirror)
    assert len(c.queries) == 112 and len(c.unjudged) == 36 and len(c.judged_queries()) == 76
    assert set(c.unjudged).isdisjoint(q.id for q in c.judged_queries())
    assert all(not c.qrels.get(q, {}) or max(c.qrels[q].values()) < 1 for q in c.unjudged)


def test_scaling_benchmark_tiny(study_copy, tmp_path, mirror):
    proc = run(study_copy, "bench_scaling.py", "--sizes", "adi", "--synthetic", "2000",
               "--synthetic-large", "1000000", "--budget-s", "60", "--synthetic-base", "adi",
               "--out", str(study_copy), "--db-dir", str(tmp_path / "db"), "--heap", "1g",
               "--mirror", str(mirror), env={"GABARITO_ARCADEDB_URL": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((study_copy / "scaling.json").read_text())
    assert res["study"] == "standard_collections/scaling" and not (study_copy / "results.json").exists()
    assert set(res["phases_s"]) == {"real adi", "synthetic 2000"}
    assert res["provenance"]["parameters"]["seed"] == 20260817  # the synthetic noise seed, from study.json
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
    assert set(syn["side_by_side"]) == {"knn_default", "knn_ef200"}
    assert "1000000" in res["skipped"] and res["skipped"]["1000000"]["reason"]["code"] == "scaling.skipped_budget"
    assert res["fits"]["vector_build_s"]["n_points"] == 2 and "slope" in res["fits"]["knn_median_ms"]
    assert res["provenance"]["engine"]["efsearch"]["query_time"] == {"code": "scaling.efsearch_query_time"}


def test_scaling_benchmark_refuses_an_external_server(study_copy, tmp_path):
    proc = run(study_copy, "bench_scaling.py", "--arcadedb-url", "http://127.0.0.1:9", "--out", str(tmp_path))
    assert proc.returncode == 2 and "starts itself" in proc.stderr
    assert not (tmp_path / "scaling.json").exists()

