import math
import random

import ir_measures
import pytest

from gabarito.core.measures import Measure
from gabarito.errors import GabaritoError
from gabarito.measure.metrics import (
    as_ranking,
    average_precision,
    evaluate,
    mean,
    ndcg_at,
    precision_at,
    rank_of,
    recall_at,
    reciprocal_rank,
    top1_overlap,
)

MEASURES = ["R@1", "R@3", "R@5", "R@10", "R@100", "RR@10", "nDCG@5", "nDCG@10", "P@10",
            "AP@100", "AP", "RR", "nDCG", "hit@1", "hit@10"]

RANKING = ["d1", "d2", "d3", "d4", "d5"]
GRADES = {"d2": 2, "d4": 1, "d9": 3, "d5": 0}


# ---------------------------------------------------------------- hand-computed cases

def test_rank_of():
    assert rank_of(RANKING, "d1") == 1
    assert rank_of(RANKING, "d4") == 4
    assert rank_of(RANKING, "d9") is None
    assert rank_of([], "d1") is None
    assert rank_of([("x", 0.1), ("y", 0.9)], "x") == 2


def test_recall_precision_rr_hand():
    assert recall_at(RANKING, GRADES, 1) == 0.0
    assert recall_at(RANKING, GRADES, 3) == pytest.approx(1 / 3)
    assert recall_at(RANKING, GRADES, 5) == pytest.approx(2 / 3)
    assert recall_at(RANKING, {"d4"}, 5) == 1.0
    assert recall_at(RANKING, "d4", 3) == 0.0
    assert precision_at(RANKING, GRADES, 5) == pytest.approx(2 / 5)
    assert precision_at(RANKING, GRADES, 10) == pytest.approx(2 / 10)
    assert reciprocal_rank(RANKING, GRADES) == 0.5
    assert reciprocal_rank(RANKING, GRADES, k=1) == 0.0
    assert reciprocal_rank(RANKING, {"d9"}, k=None) == 0.0


def test_ndcg_hand():
    dcg = 2 / math.log2(3) + 1 / math.log2(5)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at(RANKING, GRADES, 5) == pytest.approx(dcg / idcg, abs=1e-12)
    # Cutoff 1: nothing relevant at rank 1, ideal gain is 3.
    assert ndcg_at(RANKING, GRADES, 1) == 0.0
    assert ndcg_at(["d9"], GRADES, 10) == pytest.approx(3 / idcg)
    assert ndcg_at(RANKING, {"d1": 0}, 5) == 0.0


def test_average_precision_hand():
    assert average_precision(RANKING, GRADES) == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert average_precision(RANKING, GRADES, k=3) == pytest.approx((1 / 2) / 3)
    assert average_precision(["d9"], GRADES) == pytest.approx(1 / 3)
    assert average_precision(RANKING, set()) == 0.0


def test_ties_broken_by_doc_id_ascending_unlike_trec_eval():
    run = [("b", 1.0), ("a", 1.0), ("c", 2.0)]
    assert as_ranking(run) == ["c", "a", "b"]
    assert reciprocal_rank(run, {"a"}) == 0.5
    # trec_eval (via ir_measures / pytrec_eval) breaks the tie the other way: b before a.
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc(
        [ir_measures.RR], {"q": {"a": 1}}, {"q": {"b": 1.0, "a": 1.0, "c": 2.0}})}
    assert theirs["q"] == pytest.approx(1 / 3)


def test_duplicates_and_bad_cutoffs_are_errors():
    with pytest.raises(GabaritoError):
        as_ranking(["a", "b", "a"])
    with pytest.raises(GabaritoError):
        rank_of([("a", 1.0), ("a", 0.5)], "a")
    with pytest.raises(GabaritoError):
        recall_at(RANKING, GRADES, 0)


def test_evaluate_conventions():
    qrels = {
        "q1": {"d2": 1, "d5": 0},
        "q2": {"x": 0},               # nothing relevant: excluded
        "q3": {"d1": 2},              # absent from the run: zeros
        "q4": {"zz": 1},              # retrieved nothing relevant
    }
    run = {"q1": RANKING, "q4": [("d1", 3.0), ("d2", 2.0)], "q_unjudged": ["d1"]}
    result = evaluate(run, qrels, ["R@1", "R@3", "RR@10", "nDCG@10"])
    assert result.excluded == ["q2"]
    assert set(result) == {"R@1", "R@3", "RR@10", "nDCG@10"}
    for per_query in result.values():
        assert set(per_query) == {"q1", "q3", "q4"}
    assert result["R@1"] == {"q1": 0.0, "q3": 0.0, "q4": 0.0}
    assert result["R@3"]["q1"] == 1.0
    assert result["RR@10"]["q1"] == 0.5
    assert result["nDCG@10"]["q1"] == pytest.approx(1 / math.log2(3))
    assert mean(result["RR@10"]) == pytest.approx(0.5 / 3)


def test_evaluate_rejects_bad_measure_names():
    for name in ["Recall@10", "R", "P", "nDCG@0", "RR@x"]:
        with pytest.raises(GabaritoError):
            evaluate({}, {"q": {"d": 1}}, [name])


def test_mean():
    assert mean([1.0, 2.0, 3.0]) == 2.0
    assert mean({"a": 1.0, "b": 0.0}) == 0.5
    with pytest.raises(GabaritoError):
        mean([])


def test_top1_overlap():
    a = {"q1": 1, "q2": 1, "q3": 2, "q4": None, "q5": 1}
    b = {"q1": 1, "q2": 3, "q3": 1, "q4": None, "q5": None}
    assert top1_overlap(a, b) == {"both": 1, "only_a": 2, "only_b": 1, "neither": 1}
    with pytest.raises(GabaritoError):
        top1_overlap({"q1": 1}, {"q2": 1})


# ---------------------------------------------------------------- cross-check with ir_measures

def _random_collection(seed: int, single_relevant: bool):
    """Seeded qrels and a run with distinct scores (so tie conventions do not matter)."""
    rng = random.Random(seed)
    pool = [f"d{i:03d}" for i in range(300)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[tuple[str, float]]] = {}
    for q in range(400):
        qid = f"q{q:03d}"
        docs = rng.sample(pool, 12)
        n_rel = 1 if single_relevant else rng.choice([0, 1, 1, 1, 2, 3, 5])
        grades = {doc: (1 if single_relevant else rng.randint(1, 3)) for doc in docs[:n_rel]}
        grades.update({doc: 0 for doc in docs[n_rel:n_rel + rng.randint(0, 4)]})
        qrels[qid] = grades
        length = rng.choice([0, 1, 5, 10, 20, 50, 150, 150])
        scores = rng.sample(range(1_000_000), length)
        run[qid] = [(doc, s / 997.0) for doc, s in zip(rng.sample(pool, length), scores)]
    return qrels, run


def _ir_measures_per_query(qrels, run, names):
    measures = [ir_measures.parse_measure(Measure(name).ir_measures_name) for name in names]
    their_run = {qid: dict(pairs) for qid, pairs in run.items() if pairs}
    values: dict[str, dict[str, float]] = {name: {} for name in names}
    by_str = {str(m): name for m, name in zip(measures, names)}
    for metric in ir_measures.iter_calc(measures, qrels, their_run):
        values[by_str[str(metric.measure)]][metric.query_id] = metric.value
    return values


@pytest.mark.parametrize("single_relevant", [False, True])
def test_evaluate_matches_ir_measures_per_query(single_relevant):
    qrels, run = _random_collection(seed=11 if single_relevant else 7, single_relevant=single_relevant)
    ours = evaluate(run, qrels, MEASURES)
    theirs = _ir_measures_per_query(qrels, run, MEASURES)

    # The random collection covers the interesting cases.
    gold_ranks = [rank_of(run[q], d) for q in ours["R@1"] for d, g in qrels[q].items() if g > 0]
    assert any(r == 1 for r in gold_ranks)
    assert any(r is not None and 10 < r <= 100 for r in gold_ranks)
    assert any(r is not None and r > 100 for r in gold_ranks)
    assert any(r is None for r in gold_ranks)
    assert any(not run[q] for q in ours["R@1"])
    assert bool(ours.excluded) is not single_relevant

    compared = 0
    for name in MEASURES:
        for qid, value in ours[name].items():
            if not run[qid]:
                assert value == 0.0  # ir_measures never sees an empty ranking
                continue
            assert value == pytest.approx(theirs[name][qid], abs=1e-9), (name, qid)
            compared += 1
    assert compared > 250 * len(MEASURES)


def test_single_relevant_recall_is_hit_rate():
    qrels, run = _random_collection(seed=3, single_relevant=True)
    result = evaluate(run, qrels, ["R@1", "R@10", "R@100"])
    for qid, grades in qrels.items():
        (gold,) = [d for d, g in grades.items() if g > 0]
        rank = rank_of(run[qid], gold)
        for k in (1, 10, 100):
            assert result[f"R@{k}"][qid] == float(rank is not None and rank <= k)


def test_plain_id_lists_give_the_same_scores():
    qrels, run = _random_collection(seed=5, single_relevant=False)
    as_ids = {qid: as_ranking(pairs) for qid, pairs in run.items()}
    assert evaluate(as_ids, qrels, MEASURES) == evaluate(run, qrels, MEASURES)
