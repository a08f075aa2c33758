from gabarito.inputs.gold import Pair
from gabarito.measure import per_question as pq
from gabarito.measure.scaling import run_recall_at_k
from gabarito.retrieval.fusion import rrf_runs

PAIRS = [Pair("q1", "question one", "A"), Pair("q2", "question two", "B"), Pair("q3", "question three", "C")]
BM25 = {"q1": [("A", 3.0), ("X", 2.0)], "q2": [("X", 5.0), ("Y", 4.0)], "q3": [("Z", 1.0)]}
VEC = {"q1": [("X", 0.9), ("A", 0.8)], "q2": [("B", 0.9)], "q3": [("C", 0.5)]}


def test_fused_runs_per_question_and_top1_overlap():
    fused = rrf_runs([BM25, VEC], depth=10)
    rows = pq.per_question(PAIRS, {"bm25": BM25, "vector": VEC, "rrf@10": fused}, cutoff=10)
    assert [r["bm25"]["rank"] for r in rows] == [1, None, None]
    assert [r["vector"]["rank"] for r in rows] == [2, 1, 1]
    # q1: A is 1st + 2nd, X is 2nd + 1st: tie broken by doc id -> A first
    assert rows[0]["rrf@10"]["top"][:2] == ["A", "X"]
    assert pq.top1_overlap(rows, "bm25", "vector") == {"both": 0, "only_a": 1, "only_b": 2, "neither": 0}


def test_lost_by_fusion_uses_the_cutoff():
    bm = {"q1": [(f"d{i}", 100 - i) for i in range(10)]}
    vec = {"q1": [(f"e{i}", 1 - i / 100) for i in range(9)] + [("A", 0.5)]}
    fused = rrf_runs([bm, vec], depth=10)
    rows = pq.per_question([Pair("q1", "q", "A")], {"bm25": bm, "vector": vec, "rrf@10": fused}, cutoff=10)
    lost = pq.lost_by_fusion(rows, "rrf@10", ["bm25", "vector"])
    assert lost == [{"id": "q1", "gold": "A", "fused_deep_rank": 19, "bm25": None, "vector": 10}]
    assert pq.lost_by_fusion(rows, "vector", ["bm25"]) == []


def test_gold_ranks_respects_cutoff():
    assert pq.gold_ranks(VEC, PAIRS) == {"q1": 2, "q2": 1, "q3": 1}
    assert pq.gold_ranks(VEC, PAIRS, cutoff=1) == {"q1": None, "q2": 1, "q3": 1}


def test_run_recall_at_k():
    exact = {"q": [("a", 1), ("b", 0.9)], "r": [("x", 1)]}
    approx = {"q": [("a", 1), ("c", 0.8)], "r": [("x", 1)]}
    out = run_recall_at_k(approx, exact, k=2)
    assert out["mean"] == 0.75 and out["min"] == 0.5 and out["perfect"] == 1 and out["n_queries"] == 2
