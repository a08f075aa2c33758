"""The classic-collections chapter's page findings (studies.standard_collections.page_findings): what
the page reads about the collections and methods, on small hand-made results whose answers are known
(collections in the book's order and left out when absent, distinct dense models, rows in order,
collections without notes left out), and on the committed results.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studies.standard_collections import page_findings as PF

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "standard_collections"
PARITY = {"k": 10, "n_queries": 3, "mean_jaccard": 0.9, "identical_topk": 2, "ndcg_a": 0.5, "ndcg_b": 0.4,
          "ndcg_diff": 0.1, "tolerance": 0.005}


def _collection(n_docs, graded, notes, bm25):
    return {"n_documents": n_docs, "n_queries": 4, "n_judged": 3, "graded": graded, "notes": notes,
            "excluded": {"count": 1, "reason": {"code": "collection.no_relevant_document"}},
            "rrf_bm25_input": {"chosen": bm25, "rule": {"code": "collection.rrf_bm25_rule", "measure": "nDCG@10"}},
            "parity": dict(PARITY, n_queries=n_docs),
            "metrics": {"bm25": {"nDCG@10": n_docs / 100, "AP@100": 0.2}, "dense_a": {"nDCG@10": 0.3, "AP@100": 0.1}},
            "ci95": {"bm25": {"nDCG@10": [0.0, 0.5], "AP@100": [0.1, 0.3]}, "dense_a": {"nDCG@10": [0.2, 0.4]}},
            "tests": {}}


@pytest.fixture()
def res():
    return {"methods": {"bm25": {"code": "method.bm25"}, "dense_a": {"code": "method.dense_exact", "model": "A"},
                        "dense_a_index": {"code": "method.dense_lsm_vector", "model": "A"},
                        "dense_b": {"code": "method.dense_exact", "model": "B"}},
            "measures": ["nDCG@10", "AP@100"],
            "provenance": {"parameters": {"ann_model": "A"}},
            "collections": {"npl": _collection(10, False, [], "bm25"),
                            "adi": _collection(20, True, [{"code": "collection.x"}], "bm25_en")}}


def test_frame_keeps_the_book_order_and_counts_distinct_models(res):
    f = PF.frame(res, ["adi", "cranfield", "npl"])
    assert f["collections"] == ["adi", "npl"]  # cranfield is not in the results; npl after adi as the book orders
    assert f["methods"] == ["bm25", "dense_a", "dense_a_index", "dense_b"] and f["measures"] == ["nDCG@10", "AP@100"]
    assert f["dense_models"] == ["A", "B"] and f["ann_model"] == "A"


def test_collection_rows_and_choice_follow_the_order_asked(res):
    rows = PF.collection_rows(res, ["npl", "adi"])
    assert [r["collection"] for r in rows] == ["npl", "adi"]
    assert (rows[1]["n_documents"], rows[1]["excluded"], rows[1]["graded"]) == (20, 1, True)
    assert rows[0]["excluded_reason"] == {"code": "collection.no_relevant_document"}
    choice = PF.bm25_choice(res, ["adi", "npl"])
    assert choice["chosen"] == [{"collection": "adi", "method": "bm25_en"}, {"collection": "npl", "method": "bm25"}]
    assert choice["rule"]["code"] == "collection.rrf_bm25_rule" and PF.bm25_choice(res, [])["rule"] is None
    assert [r["method"] for r in PF.method_rows(res)] == ["bm25", "dense_a", "dense_a_index", "dense_b"]


def test_means_and_bars_read_each_collection_report(res):
    rows = PF.mean_rows(res, ["adi", "npl"], ["bm25", "dense_a"], ["nDCG@10", "AP@100"])
    assert [(r["collection"], r["method"]) for r in rows] == [("adi", "bm25"), ("adi", "dense_a"),
                                                              ("npl", "bm25"), ("npl", "dense_a")]
    assert rows[0]["mean"] == {"nDCG@10": 0.2, "AP@100": 0.2} and rows[0]["interval"]["AP@100"] == (0.1, 0.3)
    assert rows[1]["interval"]["AP@100"] is None and rows[2]["n_judged"] == 3
    b = PF.bars(res, ["npl", "adi"], ["bm25"], "nDCG@10")
    assert b == {"values": {"bm25": [0.1, 0.2]}, "intervals": {"bm25": [(0.0, 0.5), (0.0, 0.5)]}}


def test_parity_rows_and_notes(res):
    rows = PF.parity_rows(res, ["adi", "npl"])
    assert [r["n_queries"] for r in rows] == [20, 10] and set(rows[0]) == {"collection", *PF.PARITY_KEYS}
    assert PF.loader_notes(res, ["npl", "adi"]) == [{"collection": "adi", "notes": [{"code": "collection.x"}]}]


def test_committed_results():
    res = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    f = PF.frame(res, list(res["collections"]))
    assert f["collections"] == list(res["collections"]) and len(f["collections"]) == 5
    assert len(f["dense_models"]) == 2  # MiniLM and mpnet; the indexed mpnet is the same model
    rows = PF.mean_rows(res, f["collections"], f["methods"], f["measures"])
    assert len(rows) == len(f["collections"]) * len(f["methods"])
    assert all(r["interval"][x][0] <= r["mean"][x] <= r["interval"][x][1] for r in rows for x in f["measures"])
