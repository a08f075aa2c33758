from gabarito.study import assemble as study
from gabarito.inputs.gold import Pair

PAIRS = [Pair("q1", "question one", "A"), Pair("q2", "question two", "B"), Pair("q3", "question three", "C")]
BM25 = {"q1": [("A", 3.0), ("X", 2.0)], "q2": [("X", 5.0), ("Y", 4.0)], "q3": [("Z", 1.0)]}
VEC = {"q1": [("X", 0.9), ("A", 0.8)], "q2": [("B", 0.9)], "q3": [("C", 0.5)]}


def test_fuse_runs_and_per_question():
    fused = study.fuse_runs([BM25, VEC], depth=10)
    rows = study.per_question(PAIRS, {"bm25": BM25, "vector": VEC, "rrf@10": fused}, cutoff=10)
    assert [r["bm25"]["rank"] for r in rows] == [1, None, None]
    assert [r["vector"]["rank"] for r in rows] == [2, 1, 1]
    # q1: A is 1st + 2nd, X is 2nd + 1st: tie broken by doc id -> A first
    assert rows[0]["rrf@10"]["top"][:2] == ["A", "X"]
    assert study.top1_overlap(rows, "bm25", "vector") == {"both": 0, "only_a": 1, "only_b": 2, "neither": 0}


def test_lost_by_fusion_uses_the_cutoff():
    bm = {"q1": [(f"d{i}", 100 - i) for i in range(10)]}
    vec = {"q1": [(f"e{i}", 1 - i / 100) for i in range(9)] + [("A", 0.5)]}
    fused = study.fuse_runs([bm, vec], depth=10)
    rows = study.per_question([Pair("q1", "q", "A")], {"bm25": bm, "vector": vec, "rrf@10": fused}, cutoff=10)
    lost = study.lost_by_fusion(rows, "rrf@10", ["bm25", "vector"])
    assert lost == [{"id": "q1", "gold": "A", "fused_deep_rank": 19, "bm25": None, "vector": 10}]


def test_score_runs_shapes_and_values():
    qrels = study.qrels_from_pairs(PAIRS)
    out = study.score_runs({"bm25": BM25, "vector": VEC}, qrels, ("R@1", "RR@10"), n_resamples=200)
    assert out["n"] == 3
    assert out["metrics"]["bm25"]["R@1"] == 1 / 3
    assert out["metrics"]["vector"]["RR@10"] == (0.5 + 1 + 1) / 3
    lo, hi = out["ci"]["vector"]["RR@10"]
    assert lo <= out["metrics"]["vector"]["RR@10"] <= hi
    assert {t["measure"] for t in out["tests"]} == {"R@1", "RR@10"}


def test_ann_recall():
    exact = {"q": [("a", 1), ("b", 0.9)]}
    approx = {"q": [("a", 1), ("c", 0.8)]}
    assert study.ann_recall(approx, exact, k=2)["mean"] == 0.5
