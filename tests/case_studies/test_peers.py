"""The peers chapter's findings: phase categories, vector ratios at the same width; the
developers' rebuild budget (scripts/rebuild_budget.py: totals, bases, the doc's block equal to the
script's output); and the committed peers results read as the page reads them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from studies.peers import findings as A

REPO = Path(__file__).resolve().parents[2]
PEERS = REPO / "case-studies" / "peers"


def _budget_script():
    spec = importlib.util.spec_from_file_location("rebuild_budget", REPO / "scripts" / "rebuild_budget.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_phase_categories():
    got = {n: A.phase_category(n) for n in ("model_load", "encode_corpus", "adi/encode", "latency per N", "score tables",
                                            "index", "warm_up", "searches", "bm25 (ArcadeDB)", "load", "gold", "evaluations")}
    assert got == {"model_load": "model", "encode_corpus": "encode", "adi/encode": "encode", "latency per N": "latency",
                   "score tables": "statistics", "index": "index", "warm_up": "index", "searches": "queries",
                   "bm25 (ArcadeDB)": "queries", "load": "load", "gold": "load", "evaluations": "other"}
    assert A.by_category({"a/encode": 2.0, "b/encode": 3.0, "searches": 1.0}) == {"encode": 5.0, "queries": 1.0}


def test_budget_summary_adds_measured_and_committed_and_estimates_the_classic_encoding():
    encoders = {"models": {"m": {"fastest_onnx_setting": "onnx", "settings": {"onnx": {"passages_per_s_median": 10.0}}}}}
    bm25 = {"collections": {"adi": {"n_docs": 80, "n_queries": 20}}}
    budget = {"measured": {"benchmark_rrf": {"cold_auto": {"wall_s": 100.0, "phases_s": {}},
                                             "warm_auto": {"wall_s": 20.0, "phases_s": {}},
                                             "cold_torch": {"wall_s": 150.0, "phases_s": {}}}},
              "site": {"first_s": 60.0, "no_change_s": 9.0},
              "not_run_committed": {"standard_collections": {"wall_s": 30.0, "phases_s": {"adi/encode": 1.0}},
                                    "reranking": {"wall_s": 200.0, "phases_s": {"latency per N": 150.0}},
                                    "judgments": {"missing": "x"}}}
    B = _budget_script()
    s = B.budget_summary(budget, encoders, bm25)
    rows = {r["study"]: r for r in s["rows"]}
    assert set(rows) == {"benchmark_rrf", "standard_collections", "reranking"}
    assert rows["standard_collections"]["cold_s"] == pytest.approx(30.0 + 100 / 10.0)
    assert rows["standard_collections"]["cold_basis"] == "estimated_encoding"
    assert rows["reranking"]["cold_basis"] == "committed_no_encoding" and rows["benchmark_rrf"]["cold_torch_s"] == 150.0
    assert s["cold_total_s"] == pytest.approx(100 + 40 + 200) and s["warm_total_s"] == pytest.approx(20 + 30 + 200)
    assert s["met"] == {"cold": True, "warm": False, "site": True} and s["slowest_warm"] == "reranking"
    assert B.slowest_categories(budget, "reranking") == [("latency", 150.0)]


def test_rerun_agreement_counts_each_cold_runs_lists_and_skips_warm_failed_and_listless_runs():
    same = lambda files, identical, ranks, differing: {"files": files, "identical": identical,
                                                       "same_rankings_other_scores": ranks, "differing_rankings": differing}
    budget = {"measured": {"benchmark_rrf": {
        "cold_auto": {"backend": "auto", "runs_vs_committed": same(4, 4, 0, [])},
        "warm_auto": {"backend": "auto", "runs_vs_committed": same(4, 4, 0, [])},
        "cold_torch": {"backend": "torch", "runs_vs_committed": same(4, 2, 1, ["vector.trec"])},
        "cold_other": {"failed": "exit 2"}}, "helpcenter": {"cold_auto": {"runs_vs_committed": same(0, 0, 0, [])}}}}
    got = A.rerun_agreement(budget)
    assert [(r["run"], r["identical"], r["same_ranks"], r["differing"]) for r in got] == [
        ("cold_auto", 4, 0, []), ("cold_torch", 2, 1, ["vector.trec"])]
    assert A.rerun_agreement(budget, "helpcenter") == [] and A.rerun_agreement(budget, "absent") == []


def test_the_rebuild_budget_doc_holds_the_scripts_output():
    B = _budget_script()
    doc = (REPO / "docs" / "rebuild_budget.md").read_text(encoding="utf-8")
    block = B.current_block()
    assert f"{B.START}\n{block}{B.END}" in doc, "regenerate: python scripts/rebuild_budget.py --write docs/rebuild_budget.md"
    assert B.replace_block(doc, block) == doc


def _search(recall, qps):
    return {"recall@10": {"mean": recall}, "qps": qps, "latency_ms": {"median": 1000.0 / qps}}


def test_vector_rows_compare_at_the_same_width_and_exact_engines_at_the_widest():
    vectors = {"sizes": {"1000": {
        "searches": {"arcadedb@20": _search(0.9, 100.0), "arcadedb@200": _search(1.0, 50.0),
                     "hnswlib@20": _search(0.95, 1000.0), "numpy_exact": _search(1.0, 200.0)},
        "engines": {"hnswlib": {"build_s": 1.0, "rss_growth_mb": 5.0}, "numpy_exact": {"build_s": 0.0}},
        "arcadedb": {"ingest_s": 2.0, "build_s": 3.0, "memory_mb": {"after_build": {"rss_mb": 500.0}}},
        "http_floor_ms": {"median": 5.0}}}}
    rows = {(r["engine"], r["width"]): r for r in A.vector_rows(vectors)}
    assert rows[("hnswlib", 20)]["ratio"] == pytest.approx(10.0)
    assert rows[("numpy_exact", None)]["ratio"] == pytest.approx(4.0)  # against ArcadeDB's widest setting
    assert rows[("arcadedb_vector", 20)]["build_s"] == 5.0 and rows[("arcadedb_vector", 20)]["memory_mb"] == 500.0
    assert [r["over_floor"] for r in A.vector_floor(vectors)] == [pytest.approx(2.0), pytest.approx(4.0)]


@pytest.mark.parametrize("name", ["bm25.json", "vectors.json", "encoders.json"])
def test_committed_results_read_as_the_page_reads_them(name):
    results = json.loads((PEERS / name).read_text())
    if name == "bm25.json":
        summary = A.bm25_summary(results)
        assert set(summary) == set(A.BM25_PEERS) and summary["bm25s"]["max_abs_ndcg_diff"] < 1e-9
        assert len(A.stage_rows(results)) == 5
    elif name == "vectors.json":
        assert A.vector_summary(results)["engines"]
    else:
        rows = A.encoder_rows(results)
        assert all(r["top10_identical"] and r["max_abs_delta"] < 1e-5 for r in rows if r["setting"] != "torch")
