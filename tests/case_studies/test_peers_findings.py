"""studies.peers.findings: hand-made results (a range that must cover every row of the BM25
table, the load verdict, the vector setup read from the results, the ONNX gain per study) and the
committed results (headline = tables; the counts the page states are the recorded ones)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gabarito.publish import formatting as fmt
from studies.peers import findings

REPO = Path(__file__).resolve().parents[2]
PEERS = REPO / "case-studies" / "peers"


def _engine(ndcg, qps, share=None, diff=0.0):
    e = {"ndcg@10": ndcg, "qps": qps, "qps_ratio_to_arcadedb": qps / 100, "latency_ms": {"median": 1000 / qps}}
    if share is not None:
        e["agreement_with_arcadedb"] = {"identical_topk_share": share, "mean_jaccard": 0.9, "ndcg_diff": diff}
    return e


def _bm25(shares: dict[str, dict[str, float]], load=None):
    """``shares``: collection -> engine -> identical top-10 share with ArcadeDB."""
    collections = {}
    for name, by_engine in shares.items():
        engines = {"arcadedb": _engine(0.4, 100)}
        engines.update({e: _engine(0.4, 200, s, diff=-0.01 * s) for e, s in by_engine.items()})
        collections[name] = {"n_docs": 10 * len(name), "n_queries": len(name), "engines": engines}
    machine = {} if load is None else load
    return {"provenance": {"machine": machine, "parameters": {"k1": 1.2, "b": 0.75}}, "collections": collections}


def test_the_lossy_range_covers_every_row_of_the_table():
    # means per engine: lucene 0.4, tantivy 0.4; the old "min of minima to max of means" said 0.2-0.4
    bm25 = _bm25({"adi": {"lucene": 0.6, "bm25s": 1.0, "tantivy": 0.5},
                  "npl": {"lucene": 0.2, "bm25s": 0.9, "tantivy": 0.3}})
    a = findings.bm25_agreement(bm25)
    low, high = a["lossy_span"]
    rows = [r["identical_share"] for r in findings.bm25_rows(bm25) if r["engine"] in findings.LOSSY_LENGTHS]
    assert (low, high) == (0.2, 0.6) and all(low <= s <= high for s in rows)
    assert a["exact_min"] == 0.9 and a["max_abs_ndcg_diff"] == pytest.approx(0.01)


def test_one_collection_gives_a_range_of_one_value():
    a = findings.bm25_agreement(_bm25({"adi": {"lucene": 0.5, "bm25s": 1.0, "tantivy": 0.5}}))
    assert a["lossy_span"] == (0.5, 0.5)


def test_load_verdict():
    assert findings.load({"provenance": {"machine": {}}}) is None
    quiet = findings.load({"provenance": {"machine": {"load_average_start": [0.4, 1, 1], "load_average_end": [0.9]}}})
    assert quiet == {"start": 0.4, "end": 0.9, "valid": True, "max_load": findings.MAX_LOAD}
    busy = findings.load({"provenance": {"machine": {"load_average_start": [0.4], "load_average_end": [1.2]}}})
    assert not busy["valid"]
    recorded = findings.load({"provenance": {"machine": {"load_average_start": [0.4], "load_average_end": [0.5],
                                                         "latency_valid": False}}})
    assert not recorded["valid"]                          # what the benchmark recorded wins


def _vectors(corpus):
    return {"provenance": {"corpus": corpus, "parameters": {"M": 32, "ef_construction": 100, "widths": [20, 100]},
                           "model": {"model_id": "org/small", "dim": 8,
                                     "equivalence": {"texts": {"passages": 1, "queries": 24}}}}}


def test_vector_setup_reads_the_counts_from_the_results():
    bm25 = _bm25({"npl": {"lucene": 0.5, "bm25s": 1.0, "tantivy": 0.5}})
    s = findings.vector_setup(_vectors({"base": "npl org/small document vectors + noise"}), bm25)
    assert (s["collection"], s["n_base"], s["n_queries"], s["dim"]) == ("npl", 30, 3, 8)
    assert s["widths"] == [20, 100] and s["M"] == 32
    # one passage, several queries: the sentence writes each with its own number
    assert fmt.plural(s["equivalence"]["passages"], "passagem", "passagens") == "1 passagem"
    assert fmt.plural(s["equivalence"]["queries"], "pergunta", "perguntas") == "24 perguntas"
    from gabarito.retrieval.models.equivalence import TOP_K
    assert s["equivalence"]["top"] == TOP_K  # the top-k the check compared, as the page states it
    recorded = findings.vector_setup(_vectors({"base": "x", "collection": "npl", "n_base": 7, "n_queries": 2}), bm25)
    assert (recorded["n_base"], recorded["n_queries"]) == (7, 2)


def test_onnx_gain_per_study():
    run = lambda phases, backend="auto": {"wall_s": sum(phases.values()), "process_wall_s": 1.0, "phases_s": phases,
                                          "backend": backend}
    budget = {"measured": {
        "split": {"cold_auto": run({"load model": 2.0, "encode corpus": 5.0}),
                  "cold_torch": run({"load model": 1.0, "encode corpus": 9.0}, "torch")},
        "whole": {"cold_auto": run({"everything": 3.0}), "cold_torch": run({"everything": 4.0}, "torch")},
        "one_backend": {"cold_auto": run({"load model": 1.0})},
        "failed": {"cold_auto": {"failed": "boom"}, "cold_torch": run({"x": 1.0}, "torch")}}}
    gain = {g["study"]: g for g in findings.onnx_gain(budget)}
    assert set(gain) == {"split", "whole"}
    assert gain["split"]["split"] and gain["split"]["model"] == (2.0, 1.0) and gain["split"]["encode"] == (5.0, 9.0)
    assert not gain["whole"]["split"] and gain["whole"]["total"] == (3.0, 4.0)


def test_committed_headline_equals_the_tables():
    from gabarito.publish.provenance import load_results

    bm25, vectors = load_results(PEERS, "bm25.json"), load_results(PEERS, "vectors.json")
    encoders, budget = load_results(PEERS, "encoders.json"), load_results(PEERS, "budget.json")
    h = findings.headline(bm25, vectors, encoders, budget)
    enc = [r for r in findings.encoder_rows(encoders) if r["model"] == findings.HEADLINE_MODEL and r["fastest"]]
    assert h["encoder"] == enc[0]
    rows = findings.bm25_rows(bm25)
    for engine in findings.BM25_PEERS:
        ratios = [r["ratio"] for r in rows if r["engine"] == engine]
        assert min(ratios) <= h["bm25"][engine]["ratio_geomean"] <= max(ratios)
    table = {(r["n"], r["engine"], r["width"]): r for r in findings.vector_rows(vectors)}
    n, width = h["vectors"]["n"], h["vectors"]["width"]
    assert h["vectors"]["arcadedb"]["recall"] == table[n, "arcadedb_vector", width]["recall"]
    for engine, v in h["vectors"]["engines"].items():
        assert v["ratio"] == table[n, engine, width]["ratio"] and v["recall"] == table[n, engine, width]["recall"]
    # the counts the page states are the recorded ones (they were typed: 11.429 vectors, 384 dimensions, 93 queries)
    setup = findings.vector_setup(vectors, bm25)
    assert setup["n_base"] == bm25["collections"][setup["collection"]]["n_docs"]
    assert setup["dim"] == vectors["provenance"]["model"]["dim"]
    # the range above the BM25 table covers exactly the lossy engines' rows of that table
    a = findings.bm25_agreement(bm25)
    shares = [r["identical_share"] for r in rows if r["engine"] in findings.LOSSY_LENGTHS]
    assert a["lossy_span"] == (min(shares), max(shares))


def test_arcadedb_bm25_word_follows_every_ratio():
    fast = {e: {"ratio_geomean": 2.0} for e in findings.BM25_PEERS}
    assert findings.arcadedb_bm25_word(fast) == "menos"
    assert findings.arcadedb_bm25_word({e: {"ratio_geomean": 0.5} for e in findings.BM25_PEERS}) == "mais"
    mixed = {**fast, findings.BM25_PEERS[0]: {"ratio_geomean": 0.9}}
    assert findings.arcadedb_bm25_word(mixed) == "ora mais, ora menos"


def _encoders():
    setting = lambda secs, ratio, vs=None: {"seconds": secs, "passages_per_s_median": 100 / (sum(secs) / len(secs)),
                                            "ratio_to_torch_median": ratio, **({"vs_torch": vs} if vs else {})}
    same = {"equivalent": True, "top10_identical": True, "max_abs_delta": 1e-7}
    models = {m: {"fastest_onnx_setting": "onnx", "settings": {"torch": setting([4.0, 6.0], 1.0),
                                                              "onnx": setting([2.0, 2.0], 2.5, same)}}
              for m in (findings.HEADLINE_MODEL, findings.SMALL_MODEL)}
    return {"provenance": {"corpus": {"collection": "adi", "passages": 100},
                           "model": {m: {"model_id": f"org/{m}"} for m in models}},
            "passage_tokens": {"chars_mean": 900.0}, "models": models}


def test_encode_costs_are_per_thousand_passages_with_the_rounds():
    rows = {(r["model"], r["setting"]): r for r in findings.encode_costs(_encoders())}
    torch = rows[findings.HEADLINE_MODEL, "torch"]
    assert torch["s_per"] == pytest.approx(50.0) and torch["rounds"] == (40.0, 60.0) and torch["same_vectors"] is None
    onnx = rows[findings.HEADLINE_MODEL, "onnx"]
    assert onnx["s_per"] == pytest.approx(20.0) and onnx["fastest"] and onnx["same_vectors"] and onnx["ratio"] == 2.5


def test_essential_sets_encoding_beside_indexing_the_same_documents():
    bm25 = _bm25({"adi": {"lucene": 0.5, "bm25s": 1.0, "tantivy": 0.5}})
    for name, e in bm25["collections"]["adi"]["engines"].items():
        e["build_s"] = 0.03 if name == "arcadedb" else 0.01
    e = findings.essential(bm25, {}, _encoders(), {"measured": {}})
    assert e["bm25_index"]["s_per"] == pytest.approx(1.0)              # 0.03 s for 30 documents
    assert e["encode_over_index"] == pytest.approx(20.0) and e["cache"] is None
    assert e["per_question"]["low"] == pytest.approx(2.0) and e["per_question"]["word"] == "menos"


def test_vector_index_costs_per_thousand_vectors():
    search = lambda qps, recall=1.0: {"recall@10": {"mean": recall}, "qps": qps, "latency_ms": {"median": 1.0}}
    vectors = {"provenance": {"model": {"dim": 250}}, "sizes": {
        "2000": {"searches": {"arcadedb@100": search(10.0), "hnswlib@100": search(50.0, 0.9), "faiss_flat": search(20.0)},
                 "engines": {"hnswlib": {"build_s": 4.0, "rss_growth_mb": 6.0}, "faiss_flat": {"build_s": 0.0}},
                 "arcadedb": {"ingest_s": 1.0, "build_s": 9.0,
                              "memory_mb": {"idle": {"rss_mb": 100.0}, "after_build": {"rss_mb": 140.0}}}},
        "4000": {"searches": {"hnswlib@100": search(40.0)}, "engines": {"hnswlib": {"build_s": 8.0}}, "arcadedb": None}}}
    rows = {r["engine"]: r for r in findings.vector_index_costs(vectors)}
    assert set(rows) == {"arcadedb_vector", "hnswlib", "faiss_flat"} and rows["hnswlib"]["n"] == 2000
    assert rows["arcadedb_vector"]["build_s_per"] == pytest.approx(5.0) and rows["arcadedb_vector"]["memory_mb_per"] == 20.0
    assert rows["hnswlib"]["ratio"] == pytest.approx(5.0) and rows["hnswlib"]["memory_mb_per"] == pytest.approx(3.0)
    assert rows["faiss_flat"]["exact"] and rows["faiss_flat"]["raw_mb"] == pytest.approx(1.0)
    assert rows["faiss_flat"]["ratio"] == pytest.approx(2.0)            # against ArcadeDB at the same width
    large = findings.vector_index_costs(vectors, 4000)
    assert [(r["engine"], r["ratio"]) for r in large] == [("hnswlib", None)]


def test_committed_essential_equals_the_tables():
    from gabarito.publish.provenance import load_results

    bm25, vectors = load_results(PEERS, "bm25.json"), load_results(PEERS, "vectors.json")
    encoders, budget = load_results(PEERS, "encoders.json"), load_results(PEERS, "budget.json")
    e = findings.essential(bm25, vectors, encoders, budget)
    assert e["big"] in findings.encode_costs(encoders) and e["big"]["same_vectors"]
    assert e["bm25_index"] == findings.bm25_index_costs(bm25, e["collection"])[0]
    assert e["big"]["rounds"][0] <= e["big"]["s_per"] <= e["big"]["rounds"][1]
    assert e["cache"]["encode_warm_s"] < e["cache"]["encode_cold_s"]
    costs = findings.evaluation_cost(load_results(PEERS, "measures.json"))
    assert costs[0]["rows"] < costs[-1]["rows"] and all(c["max_abs_diff"] == 0.0 for c in costs)


def test_evaluation_cost_reads_ranx_against_the_columnar_core_and_tolerates_its_absence():
    tools = {"gabarito": {"median_s": 4.0}, "gabarito_columns": {"median_s": 2.0},
             "ir_measures": {"ratio_to_gabarito_median": 3.0},
             "ranx": {"installed": True, "first_call_s": 9.0, "median_s": 3.0, "ratio_to_gabarito_columns_median": 1.5}}
    m = {"collections": {"large": {"queries": 10, "rows": 100, "tools": tools}}}
    row = findings.evaluation_cost(m)[0]
    assert (row["ranx_ratio"], row["ranx_first_s"], row["ir_measures_ratio"]) == (1.5, 9.0, 3.0)
    del tools["ranx"]
    assert findings.evaluation_cost(m)[0]["ranx_ratio"] is None


def test_whole_report_names_the_highest_load_it_recorded():
    """The cost page says other programs shared the processor when the cold run recorded a load
    above the quiet-machine rule; the highest load is read from the run's start, end and studies."""
    from studies.peers.cold_report import whole_report
    cold = {"provenance": {"machine": {"load_average_start": [0.4, 0, 0], "load_average_end": [0.6, 0, 0]}},
            "studies": {"a": {"process_wall_s": 1.0, "load_average_before": [0.5, 0, 0], "load_average_after": [3.2, 0, 0],
                              "check": {"files": 1, "reproduced": 1, "not_reproduced": []}}}}
    assert whole_report(cold)["load_max"] == 3.2
    del cold["studies"]["a"]["load_average_after"]
    assert whole_report(cold)["load_max"] == 0.6
    assert whole_report({"studies": {}})["load_max"] is None


def test_the_bm25_engines_of_evaluate_are_the_reference_and_the_aligned_memory_engine():
    import json

    from studies.peers.findings_bm25 import engines_agreement

    committed = Path(__file__).resolve().parents[2] / "case-studies" / "peers" / "bm25_alignment.json"
    out = engines_agreement(json.loads(committed.read_text(encoding="utf-8")))
    assert out["engines"] == ["arcadedb", "memory_aligned"]  # the page counts them: "Dois motores"
    assert fmt.in_words(len(out["engines"]), "m").capitalize() == "Dois"


def test_a_budget_run_is_named_by_its_state_and_backend_never_taken_apart():
    from gabarito.errors import GabaritoError
    from studies.peers import findings_budget as B

    budget = {"measured": {"x": {
        "cold_auto": {"backend": "auto", "wall_s": 10.0, "process_wall_s": 11.0, "phases_s": {"encode": 4.0},
                      "runs_vs_committed": {"files": 2, "identical": 2, "same_rankings_other_scores": 0,
                                            "differing_rankings": []}},
        "warm_auto": {"backend": "auto", "wall_s": 2.0, "process_wall_s": 2.5, "phases_s": {"load": 1.0},
                      "runs_vs_committed": {"files": 2, "identical": 2, "same_rankings_other_scores": 0,
                                            "differing_rankings": []}},
        "cold_torch": {"backend": "torch", "failed": "out of memory"}}}}
    rows = B.budget_rows(budget)
    assert [(r["run"], r.get("state"), r.get("backend")) for r in rows] == \
        [("cold_auto", "cold", "auto"), ("warm_auto", "warm", "auto"), ("cold_torch", None, None)]
    assert [r["run"] for r in B.rerun_agreement(budget, "x")] == ["cold_auto"]  # runs from nothing only
    with pytest.raises(GabaritoError, match="'cold_onnx' is not one the benchmark writes for backend 'auto'"):
        B.run_state("cold_onnx", "auto")
