"""The home page's headline of the cross-encoder trained here (the judgments chapter's is tested in
tests/case_studies/test_judgments_findings.py),
on small hand-made results whose answers are known."""

from __future__ import annotations

from studies.standard_collections import reranker_findings


def _test(a, b, diff, p):
    return {"measure": "nDCG@10", "a": a, "b": b, "mean_diff": diff, "p_holm": p}


def test_trained_reranker_headline_orients_each_test_as_reread_minus_first_stage():
    res = {"folds": {
        "npl": {"first_stages": {
            "bm25": {"metrics": {}, "tests": [_test("bm25", "bm25+ce@20", -0.05, 0.01)]},     # reread better, listed b first
            "dense": {"metrics": {}, "tests": [_test("dense+ce@20", "dense", -0.02, 0.20)]},  # worse, not significant
        }},
        "cisi": {"first_stages": {"rrf": {"metrics": {}, "tests": [_test("rrf+ce@20", "rrf", -0.04, 0.001),
                                                    _test("rrf+ce@5", "rrf", 0.09, 0.001)]}}},
    }}
    h = reranker_findings.headline(res)
    assert h["total"] == 3
    assert [(x["held_out"], x["stage"]) for x in h["better"]] == [("npl", "bm25")]
    assert [(x["held_out"], x["stage"]) for x in h["worse"]] == [("cisi", "rrf")]
    assert abs(h["better"][0]["diff"] - 0.05) < 1e-12
