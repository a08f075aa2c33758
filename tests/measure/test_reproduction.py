"""Published ranks beside ours, and published means against our intervals (hand-made cases)."""

import pytest

from gabarito.errors import GabaritoError
from gabarito.measure.reproduction import metric_check, rank_agreement, reproduction


def _row(qid, gold, **ranks):
    return {"id": qid, "gold": gold, **{m: {"rank": r if r and r <= 10 else None, "deep_rank": r, "top": []}
                                        for m, r in ranks.items()}}


ROWS = [_row("p1", "A", bm25=1, fused=3), _row("p2", "B", bm25=None, fused=12), _row("p3", "C", bm25=4, fused=2)]
PUBLISHED = {"p1": {"bm25": 1, "rrf": 2}, "p2": {"bm25": None, "rrf": None}, "p3": {"bm25": 7, "rrf": 1}}


def test_ranks_agree_only_when_equal_and_absence_beyond_the_cutoff_is_agreement():
    out = rank_agreement(PUBLISHED, ROWS, {"bm25": "bm25", "rrf": "fused"}, cutoff=10)
    assert out["n"] == 3
    # bm25: p1 1=1, p2 None=None, p3 4 vs 7 -> 2 agree, p3 ours better
    assert out["agree"] == {"bm25": 2, "rrf": 1}
    assert out["moved"]["bm25"] == {"better": 1, "worse": 0}
    # rrf: p1 ours 3 vs 2 (worse); p2 ours 12 beyond the cutoff = None = published None; p3 2 vs 1 (worse)
    assert out["moved"]["rrf"] == {"better": 0, "worse": 2}
    p2 = next(r for r in out["rows"] if r["id"] == "p2")
    assert p2["rrf"] == {"published": None, "ours": None, "agrees": True}


def test_a_published_question_we_did_not_run_is_an_error():
    with pytest.raises(GabaritoError, match="p9"):
        rank_agreement({**PUBLISHED, "p9": {"bm25": 1}}, ROWS, {"bm25": "bm25"})


def test_inside_the_interval_allows_the_rounding_of_the_published_value():
    metrics = {"x": {"R@1": 0.30, "RR@10": 0.40}}
    ci = {"x": {"R@1": [0.2, 0.3495], "RR@10": [0.45, 0.6]}}
    out = metric_check({"pub": {"Recall@1": 0.35, "MRR": 0.421}}, metrics, ci, {"pub": "x"})
    # 0.35 stands for [0.3495, 0.3505): it meets an interval ending at 0.3495
    assert [c["inside"] for c in out] == [True, False]
    assert out[0]["measure"] == "R@1" and out[1]["measure"] == "RR@10" and out[1]["ours"] == 0.40
    with pytest.raises(GabaritoError, match="unknown published measure"):
        metric_check({"pub": {"Precision@3": 0.1}}, metrics, ci, {"pub": "x"})


def test_reproduction_counts_inside():
    metrics = {"fused": {"R@1": 0.5}, "bm25": {"R@1": 0.5}}
    ci = {"fused": {"R@1": [0.1, 0.9]}, "bm25": {"R@1": [0.6, 0.9]}}
    out = reproduction(PUBLISHED, {"bm25": {"Recall@1": 0.5}, "rrf": {"Recall@1": 0.5}}, ROWS, metrics, ci,
                       {"bm25": "bm25", "rrf": "fused"})
    assert out["inside"] == 1 and out["n_metrics"] == 2
