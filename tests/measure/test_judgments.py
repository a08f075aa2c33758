"""Grades to qrels: the combination rules, and graded metrics against ir_measures."""

import pytest

from gabarito.errors import GabaritoError
from gabarito.measure.judgments import acceptable_misses, combine, graded_qrels
from gabarito.core.runs import Qrels, Run
from gabarito.measure.score import score_runs

KEY = {"P1": {"question": "q1", "concept": "gold1"}, "P2": {"question": "q1", "concept": "x"},
       "P3": {"question": "q2", "concept": "gold2"}, "P4": {"question": "q2", "concept": "y"},
       "P5": {"question": "q3", "concept": "gold3"}}
EXPECTED = {"q1": "gold1", "q2": "gold2", "q3": "gold3"}


def test_agreed_adjudicated_expected_kept_and_rejected():
    a = {"P1": 1, "P2": 2, "P3": 0, "P4": 0, "P5": 0}
    b = {"P1": 1, "P2": 1, "P3": 0, "P4": 0, "P5": 1}
    c = {"P2": 1, "P5": 0}
    out = combine(a, b, c, KEY, EXPECTED)
    p = out["pairs"]
    assert out["n_disagreements"] == 2
    assert p["P1"]["grade"] == 2 and p["P1"]["rule"] == "expected kept at 2"   # agreed 1, but expected
    assert p["P2"]["grade"] == 1 and p["P2"]["rule"] == "adjudicated"
    assert p["P3"]["grade"] == 0 and p["P3"]["rule"] == "expected rejected by every assessor"
    assert p["P4"]["grade"] == 0 and p["P4"]["rule"] == "agreed"
    # P5: B gave 1, so not every assessor gave 0: the expected concept keeps 2
    assert p["P5"]["grade"] == 2 and out["gold_rejected"] == ["P3"]


def test_a_missing_adjudication_or_grade_is_an_error():
    a = {k: 0 for k in KEY}
    b = {**a, "P2": 1}
    with pytest.raises(GabaritoError, match="P2 has no adjudication"):
        combine(a, b, {}, KEY, EXPECTED)
    with pytest.raises(GabaritoError, match="every pair"):
        combine({"P1": 0}, b, {}, KEY, EXPECTED)


def test_graded_qrels_keep_every_grade_of_the_questions_asked():
    a = {"P1": 2, "P2": 1, "P3": 2, "P4": 0, "P5": 2}
    q = graded_qrels(combine(a, a, {}, KEY, EXPECTED)["pairs"], ["q1", "q2"])
    assert q == {"q1": {"gold1": 2, "x": 1}, "q2": {"gold2": 2, "y": 0}}
    assert q.at_least(2) == {"q1": {"gold1": 1}, "q2": {"gold2": 1}}


def test_acceptable_misses_count_first_results_judged_relevant():
    qrels = Qrels({"q1": {"gold1": 2, "x": 1}, "q2": {"gold2": 2, "y": 2}, "q3": {"gold3": 2}})
    run = Run({"q1": ["x", "gold1"], "q2": ["y"], "q3": ["z"]})
    out = acceptable_misses(run, EXPECTED, qrels)
    assert out["misses"] == 3 and out["acceptable"] == 2 and out["full_answers"] == 1 and out["unjudged"] == 1


def test_graded_metrics_match_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    qrels = Qrels({"q1": {"a": 2, "b": 1, "c": 0, "d": 2}, "q2": {"e": 1, "f": 2}, "q3": {"g": 2}})
    run = Run({"q1": [("c", 3.0), ("b", 2.0), ("a", 1.0), ("x", 0.5)], "q2": [("f", 2.0), ("e", 1.0)],
               "q3": [("y", 1.0), ("z", 0.9)]})
    ours = score_runs({"r": run}, qrels, ["nDCG@10", "R@10", "RR@10"], resamples=100).per_query["r"]
    ir_qrels = [ir_measures.Qrel(q, d, g) for q, row in qrels.items() for d, g in row.items()]
    ir_run = [ir_measures.ScoredDoc(q, d, s) for q, row in run.items() for d, s in row]
    for ours_name, measure in (("nDCG@10", ir_measures.nDCG @ 10), ("R@10", ir_measures.R @ 10),
                               ("RR@10", ir_measures.RR @ 10)):
        theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], ir_qrels, ir_run)}
        for q in qrels:
            assert ours[ours_name][q] == pytest.approx(theirs[q], abs=1e-9), (ours_name, q)
    # grade 2 only: R@10 of q1 counts a and d
    full = score_runs({"r": run}, qrels.at_least(2), ["R@10"], resamples=100).per_query["r"]["R@10"]
    assert full["q1"] == pytest.approx(0.5)
