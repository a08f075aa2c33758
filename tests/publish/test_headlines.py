"""The home page's headlines of the judgments chapter and of the cross-encoder trained here,
on small hand-made results whose answers are known."""

from __future__ import annotations

from gabarito.publish import headlines


def _set(kappa, misses, acceptable, single, graded):
    return {"agreement": {"linear": {"kappa": kappa}},
            "acceptable_misses": {"bm25": {"misses": misses, "acceptable": acceptable}},
            "regimes": {"single": {"order": {"nDCG@10": single}}, "graded": {"order": {"nDCG@10": graded}}}}


def test_judgments_headline_counts_sets_whose_order_changes():
    res = {"sets": {"a": _set(0.8, 4, 1, ["bm25", "vector"], ["bm25", "vector"]),
                    "b": _set(0.9, 6, 5, ["bm25", "vector"], ["vector", "bm25"])}}
    h = headlines.judgments(res)
    assert (h["kappa_min"], h["kappa_max"]) == (0.8, 0.9)
    assert (h["bm25_misses"], h["bm25_acceptable"]) == (10, 6)
    assert h["order_changed"] == ["b"] and h["sets"] == ["a", "b"]


def _test(a, b, diff, p):
    return {"measure": "nDCG@10", "a": a, "b": b, "mean_diff": diff, "p_holm": p}


def test_trained_reranker_headline_orients_each_test_as_reread_minus_first_stage():
    res = {"folds": {
        "npl": {"first_stages": {
            "bm25": {"tests": [_test("bm25", "bm25+ce@20", -0.05, 0.01)]},     # reread better, listed b first
            "dense": {"tests": [_test("dense+ce@20", "dense", -0.02, 0.20)]},  # worse, not significant
        }},
        "cisi": {"first_stages": {"rrf": {"tests": [_test("rrf+ce@20", "rrf", -0.04, 0.001),
                                                    _test("rrf+ce@5", "rrf", 0.09, 0.001)]}}},
    }}
    h = headlines.trained_reranker(res)
    assert h["total"] == 3
    assert [(x["held_out"], x["stage"]) for x in h["better"]] == [("npl", "bm25")]
    assert [(x["held_out"], x["stage"]) for x in h["worse"]] == [("cisi", "rrf")]
    assert abs(h["better"][0]["diff"] - 0.05) < 1e-12
