import pytest

from gabarito.errors import GabaritoError
from gabarito.measure import stats
from gabarito.measure.runs import Qrels, Run
from gabarito.measure.score import interval, score_runs, paired_tests

QRELS = Qrels.single({"q1": "A", "q2": "B", "q3": "C"})
BM25 = Run({"q1": [("A", 3.0), ("X", 2.0)], "q2": [("X", 5.0), ("Y", 4.0)], "q3": [("Z", 1.0)]})
VEC = Run({"q1": [("X", 0.9), ("A", 0.8)], "q2": [("B", 0.9)], "q3": [("C", 0.5)]})


def test_score_runs_shapes_and_hand_computed_means():
    out = score_runs({"bm25": BM25, "vector": VEC}, QRELS, ["R@1", "RR@10", "hit@1"], resamples=200, seed=7)
    assert out["n"] == 3 and out["queries"] == ["q1", "q2", "q3"]
    assert out["seed"] == 7 and out["resamples"] == 200
    assert out["metrics"]["bm25"]["R@1"] == 1 / 3
    assert out["metrics"]["vector"]["RR@10"] == (0.5 + 1 + 1) / 3
    assert out["metrics"]["vector"]["hit@1"] == 2 / 3
    lo, hi = out["ci"]["vector"]["RR@10"]
    assert lo <= out["metrics"]["vector"]["RR@10"] <= hi
    assert {t["measure"] for t in out["tests"]} == {"R@1", "RR@10", "hit@1"}
    assert [(t["a"], t["b"]) for t in paired_tests(out, "R@1")] == [("bm25", "vector")]


def test_intervals_are_the_stats_bootstrap_in_the_given_order():
    values = [1.0, 0.0, 0.5, 1.0, 0.25]
    got = interval(values, resamples=500, seed=3)
    assert got["value"] == pytest.approx(sum(values) / 5)
    assert got["ci95"] == list(stats.bootstrap_ci(values, n_resamples=500, seed=3))
    assert interval([]) is None


def test_order_changes_resampling_but_not_means_and_must_cover_the_queries():
    a = score_runs({"v": VEC}, QRELS, ["RR@10"], resamples=300, seed=1)
    b = score_runs({"v": VEC}, QRELS, ["RR@10"], resamples=300, seed=1, order=["q3", "q1", "q2"])
    assert a["metrics"] == b["metrics"]
    assert a["tests"] == [] and b["queries"] == ["q3", "q1", "q2"]
    with pytest.raises(GabaritoError):
        score_runs({"v": VEC}, QRELS, ["RR@10"], order=["q1"])


def test_tested_limits_the_paired_tests():
    out = score_runs({"bm25": BM25, "vector": VEC}, QRELS, ["R@1", "RR@10"], tested=["RR@10"], resamples=100)
    assert {t["measure"] for t in out["tests"]} == {"RR@10"}
