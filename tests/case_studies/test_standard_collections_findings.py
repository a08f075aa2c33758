"""The classic-collections chapter's findings (studies.standard_collections.findings): the fused
run against its inputs read through Report, on small hand-made results whose answers are known
(a test stored either way round, a missing test, significant or not, one collection or several),
and on the committed results.json: the headline's numbers are the table's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gabarito.measure.report import ALPHA
from studies.standard_collections import findings as CF

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "standard_collections"


def _t(a, b, diff, p, dz=0.5):
    return {"a": a, "b": b, "mean_diff": diff, "p_holm": p, "dz": dz}


def _collection(fused, bm25, dense, tests, measure="nDCG@10"):
    return {"rrf_bm25_input": {"chosen": "bm25_en"},
            "metrics": {"rrf_mpnet": {measure: fused}, "bm25_en": {measure: bm25}, "dense_mpnet": {measure: dense}},
            "tests": {measure: tests}}


@pytest.fixture()
def res():
    return {"collections": {
        # fused above both, both significant; the test against BM25 stored the other way round
        "adi": _collection(0.5, 0.4, 0.3, [_t("bm25_en", "rrf_mpnet", -0.1, 0.001, -0.7),
                                            _t("rrf_mpnet", "dense_mpnet", 0.2, 0.01)]),
        # above both, one difference not significant
        "npl": _collection(0.5, 0.45, 0.49, [_t("rrf_mpnet", "bm25_en", 0.05, 0.2), _t("rrf_mpnet", "dense_mpnet", 0.01, 0.001)]),
        # below the dense run; no test against BM25 stored
        "cisi": _collection(0.3, 0.2, 0.35, [_t("dense_mpnet", "rrf_mpnet", 0.05, 0.04)]),
    }}


def test_headline_orients_fused_minus_the_other_and_counts_significance(res):
    h = CF.headline(res)
    assert (h["n"], h["beats_both"], h["beats_both_significant"], h["measure"]) == (3, 2, 1, "nDCG@10")
    adi, npl, cisi = h["rows"]
    assert adi["vs_bm25"]["diff"] == pytest.approx(0.1) and adi["vs_bm25"]["dz"] == pytest.approx(0.7)
    assert adi["vs_bm25"]["verdict"] == "better" and adi["beats_both_significant"]
    assert npl["beats_both"] and not npl["beats_both_significant"] and npl["vs_bm25"]["verdict"] == "same"
    assert cisi["vs_bm25"] is None and cisi["vs_dense"]["diff"] == pytest.approx(-0.05)
    assert cisi["vs_dense"]["verdict"] == "worse" and not cisi["beats_both"]
    assert adi["values"] == {"rrf_mpnet": 0.5, "bm25_en": 0.4, "dense_mpnet": 0.3}


def test_a_p_just_at_alpha_is_not_significant(res):
    res["collections"]["adi"]["tests"]["nDCG@10"][1]["p_holm"] = ALPHA
    assert CF.headline(res)["beats_both_significant"] == 0


def test_fusion_answers_leave_out_a_pair_without_a_test(res):
    answers = CF.fusion_answers(res, ["cisi", "adi"], measures=["nDCG@10"])
    assert [a["collection"] for a in answers] == ["cisi", "adi"]
    (cisi,) = answers[0]["measures"]
    assert [x["method"] for x in cisi["against"]] == ["dense_mpnet"]
    c = cisi["against"][0]["comparison"]
    assert (c.a, c.b, c.direction, c.significant) == ("rrf_mpnet", "dense_mpnet", -1, True)
    adi = answers[1]["measures"][0]["against"]
    assert [x["method"] for x in adi] == ["bm25_en", "dense_mpnet"] and adi[0]["comparison"].diff == pytest.approx(0.1)


def test_pvalue_matrix_is_symmetric_with_none_where_no_test(res):
    methods = ["rrf_mpnet", "bm25_en", "dense_mpnet"]
    z = CF.pvalue_matrix(res, "adi", methods)
    assert z[0][0] is None and z[0][1] == z[1][0] == 0.001 and z[0][2] == z[2][0] == 0.01
    assert z[1][2] is None  # BM25 against dense was not stored in this fixture


def test_side_by_side_lists_real_then_synthetic_corpora():
    scaling = {"real": {"adi": {"side_by_side": {"bm25": {"arcadedb_http_qps": 100.0, "bm25s_in_process_qps": 1000.0,
                                                          "ratio_bm25s_over_arcadedb": 10.0}}},
                        "npl": {}},
               "synthetic": {"30000": {"side_by_side": {"knn": {"arcadedb_http_qps": 50.0, "numpy_exact_qps": 500.0,
                                                                "ratio_numpy_over_arcadedb": 10.0}}}}}
    rows = CF.side_by_side(scaling)
    assert [(r["collection"], r["n_vectors"], r["kind"]) for r in rows] == [("adi", None, "bm25"), (None, 30000, "knn")]
    assert rows[1]["in_process_qps"] == 500.0 and rows[0]["ratio"] == 10.0


def test_committed_headline_numbers_are_the_table_s():
    res = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    h = CF.headline(res)
    assert h["n"] == len(res["collections"])
    for row in h["rows"]:
        col = res["collections"][row["collection"]]
        for method, value in row["values"].items():
            assert value == col["metrics"][method]["nDCG@10"]  # the numbers of the results table
        stored = {frozenset((t["a"], t["b"])): t for t in col["tests"] if t["measure"] == "nDCG@10"}  # report rows
        for other, key in ((row["bm25"], "vs_bm25"), ("dense_mpnet", "vs_dense")):
            t = stored[frozenset(("rrf_mpnet", other))]
            assert row[key]["p_holm"] == t["p_holm"]  # the numbers of the significance matrix
            assert abs(row[key]["diff"]) == pytest.approx(abs(t["mean_diff"]), abs=1e-15)
        assert row["beats_both"] == (row["values"]["rrf_mpnet"] > max(row["values"][row["bm25"]],
                                                                        row["values"]["dense_mpnet"]))
    assert h["beats_both"] == sum(r["beats_both"] for r in h["rows"])


def _checks(res, identical=(3, 3, 2), recall=(1.0, 0.9, 0.99), diff=(0.0, 0.002, -0.004)):
    for c, same, rec, d in zip(res["collections"].values(), identical, recall, diff):
        c["parity"] = {"k": 10, "n_queries": 3, "identical_topk": same, "ndcg_diff": d}
        c["ann"] = {"recall@10": {"mean": rec}}
    return res


def test_essentials_sides_spans_and_checks(res):
    e = CF.essentials(_checks(res))
    assert (e["n"], e["beats_both"], e["beats_both_significant"]) == (3, 2, 1)   # headline's keys kept
    assert e["vs_bm25"]["better"] == ["adi"] and e["vs_bm25"]["n"] == 2             # cisi has no test against BM25
    assert e["vs_bm25"]["better_span"] == pytest.approx((0.1, 0.1)) and e["vs_bm25"]["rest_span"] == pytest.approx((0.05, 0.05))
    assert e["vs_dense"]["better"] == ["adi", "npl"] and e["vs_dense"]["rest_span"] == pytest.approx((-0.05, -0.05))
    # by_gain: the same collections, smallest difference first (what the home page's range reads)
    diffs = {r["collection"]: r["vs_dense"]["diff"] for r in e["rows"] if r["vs_dense"]}
    assert sorted(e["vs_dense"]["by_gain"]) == sorted(e["vs_dense"]["better"])
    assert [diffs[c] for c in e["vs_dense"]["by_gain"]] == sorted(diffs[c] for c in e["vs_dense"]["better"])
    assert e["worse_any"] == ["cisi"] and [r["collection"] for r in e["both"]] == ["adi"]
    assert e["parity"] == {"identical": 8, "n": 9, "k": 10, "max_ndcg_diff": 0.004}
    assert e["ann"] == {"collection": "npl", "min_recall": 0.9}
    assert e["rows"][0]["vs_bm25"]["ci"] is None  # the hand-made tests store no interval


def test_essentials_span_is_none_when_no_collection_is_on_that_side(res):
    for c in res["collections"].values():
        for t in c["tests"]["nDCG@10"]:
            t["p_holm"] = 1.0
    e = CF.essentials(_checks(res))
    assert e["vs_bm25"]["better"] == [] and e["vs_bm25"]["better_span"] is None and e["worse_any"] == []


def test_latency_shown_only_where_every_corpus_is_marked_valid():
    fits = {k: {"points": [[1, 1], [10, 2]], "slope": 0.3} for k in ("ingest_s", "bm25_median_ms", "knn_median_ms")}
    fits["vector_build_s"] = {"points": []}
    run = {"real": {"adi": {}}, "synthetic": {"30000": {}}, "fits": fits}
    names = ["ingest_s", "vector_build_s", "bm25_median_ms", "knn_median_ms", "rss_after_build_mb"]
    assert not CF.latency_valid(run) and CF.shown_fits(run, names) == ["ingest_s"]
    run["real"]["adi"]["latency_valid"] = True
    assert not CF.latency_valid(run)                      # one corpus marked is not the run
    run["synthetic"]["30000"]["latency_valid"] = True
    assert CF.latency_valid(run) and CF.shown_fits(run, names) == ["ingest_s", "bm25_median_ms", "knn_median_ms"]
    assert not CF.latency_valid({"real": {}, "synthetic": {}})


def test_unmeasured_sizes_carry_the_extrapolation():
    run = {"skipped": {"1000000": {"estimated_ingest_s": 900.0, "estimated_build_s": 1000.0, "raw_float32_gb": 1.5,
                                   "heap_gb": 4.0, "reason": {"from_vectors": 100000}}}}
    assert CF.unmeasured(run) == [{"n_vectors": 1000000, "ingest_s": 900.0, "build_s": 1000.0, "from_vectors": 100000,
                                   "raw_float32_gb": 1.5, "heap_gb": 4.0}]
    assert CF.unmeasured({}) == []


def test_committed_essentials_and_scaling():
    res = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    e = CF.essentials(res)
    assert len(e["both"]) == e["beats_both_significant"]
    assert set(e["vs_dense"]["better"]) >= {r["collection"] for r in e["both"]}
    assert e["parity"]["n"] == sum(c["parity"]["n_queries"] for c in res["collections"].values())
    assert all(r["vs_bm25"]["ci"][0] <= r["vs_bm25"]["diff"] <= r["vs_bm25"]["ci"][1] for r in e["rows"])
    scaling = json.loads((STUDY / "scaling.json").read_text(encoding="utf-8"))
    shown = CF.shown_fits(scaling, list(scaling["fits"]))
    assert CF.latency_valid(scaling) or not set(shown) & set(CF.QUERY_TIME_FITS)


def _scaling():
    lat = {"http_floor": {"median": 1.0, "p95": 2.0}, "bm25": {"median": 3.0, "p95": 4.0}}
    return {"provenance": {"model": {"model_id": "m"},
                           "engine": {"efsearch": {"query_time": {"code": "q"}, "default_when_unset": {"code": "d"},
                                                   "index_metadata": "text"}}},
            "fits": {"note": {"code": "fit"}, "ingest_s": {"points": [[1, 1], [10, 2]], "slope": 0.3},
                     "vector_build_s": {"points": []}, "knn_median_ms": {"points": [[1, 1]], "slope": 1.0}},
            "real": {"npl": {"n_docs": 10, "n_tokens": 100, "ingest_s": 0.5, "vector_build_s": 0.7,
                             "memory_mb": {"after_build": {"rss_mb": 300.0}}, "latency_ms": lat},
                     "adi": {"n_docs": 5, "n_tokens": 50, "ingest_s": 0.1, "vector_build_s": 0.2,
                             "memory_mb": {"after_build": {"rss_mb": 200.0}}}},
            "synthetic": {"30000": {"ann_recall": {"default": {"mean": 0.9}}, "ingest_s": 1.0, "vector_build_s": 2.0,
                                    "memory_mb": {"after_build": {"rss_mb": 400.0}},
                                    "latency_ms": {"knn_default": {"median": 5.0, "p95": 6.0}}}}}


def test_scaling_setup_real_rows_and_efsearch():
    run = _scaling()
    s = CF.scaling_setup(run, ["ingest_s", "vector_build_s", "knn_median_ms"])
    assert s["model"] == "m" and s["fit_note"] == {"code": "fit"}
    assert list(s["fits"]) == ["ingest_s"]  # no points; a query time while latency is not valid
    rows = CF.real_rows(run)
    assert [r["collection"] for r in rows] == ["npl", "adi"]  # the run's order
    assert (rows[0]["build_s"], rows[0]["memory_mb"], rows[0]["http_floor_ms"]) == (0.7, 300.0, 1.0)
    assert rows[0]["bm25_ms"] == (3.0, 4.0) and rows[0]["knn_ms"] == (None, None)
    assert rows[1]["http_floor_ms"] is None  # no latency recorded: nothing to show, no error
    assert CF.efsearch(run) == {"query_time": {"code": "q"}, "default_when_unset": {"code": "d"}}
    (syn,) = CF.synthetic_rows(run)  # knn_ef200 was not timed
    assert (syn["n"], syn["search"], syn["latency_ms"]) == (30000, "knn_default", (5.0, 6.0))


def test_committed_scaling_rows_are_the_file_s():
    run = json.loads((STUDY / "scaling.json").read_text(encoding="utf-8"))
    for r in CF.real_rows(run):
        raw = run["real"][r["collection"]]
        assert r["build_s"] == raw["vector_build_s"] and r["knn_ms"][0] == raw["latency_ms"]["knn"]["median"]
    assert set(CF.scaling_setup(run, list(run["fits"]))["fits"]) == set(CF.shown_fits(run, list(run["fits"])))
