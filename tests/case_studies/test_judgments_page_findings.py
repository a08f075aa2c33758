"""The judgments chapter's table and detail-box findings (studies.judgments.page_findings) on small
hand-made results whose answers are known, and on the committed results.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studies.judgments import page_findings as pf

STUDY = Path(__file__).resolve().parents[2] / "case-studies" / "judgments"


def _agreement(kappa, n=10, observed=0.8, grades=(0, 1, 2), confusion=((5, 1, 0), (1, 2, 0), (0, 0, 1))):
    k = {"kappa": kappa, "ci95": [kappa - 0.1, kappa + 0.1]}
    return {"grades": list(grades), "confusion": [list(r) for r in confusion], "n_pairs": n,
            "observed_agreement": observed, "unweighted": dict(k, kappa=kappa - 0.05), "linear": k,
            "either_nonzero": {"n_pairs": n // 2, "unweighted": dict(k, kappa=kappa - 0.3),
                               "linear": dict(k, kappa=kappa - 0.2)}}


def _regime(means, order):
    return {"metrics": {m: {"nDCG@10": v, "R@10": v / 2} for m, v in means.items()},
            "ci95": {m: {"nDCG@10": [v - 0.1, v + 0.1], "R@10": [v / 2 - 0.1, v / 2 + 0.1]} for m, v in means.items()},
            "order": {"nDCG@10": order, "R@10": order[::-1]}}


def _set(n, bm25, vector, misses):
    return {"n_questions": n, "pool": {"pairs": 10 * n, "mean": 10.0}, "known_answers": 1,
            "relevant_per_question": {"mean": 2.5, "with_more_than_one": n - 1},
            "agreement": _agreement(0.7),
            "regimes": {"single": _regime({"bm25": bm25, "vector": vector}, ["bm25", "vector"]),
                        "graded": _regime({"bm25": bm25 - 0.2, "vector": vector}, ["vector", "bm25"])},
            "acceptable_misses": {"bm25": {"misses": misses, "acceptable": 1 if misses else 0, "full_answers": 0},
                                  "vector": {"misses": 4, "acceptable": 3, "full_answers": 2}}}


def _adj(n, higher):
    return {"n": n, "higher": higher, "lower": n - higher, "between": 0, "outside": 0,
            "by_kind": {"0-1": {"n": n, "higher": higher, "lower": n - higher, "between": 0, "outside": 0}}}


@pytest.fixture
def res():
    roles = {"A": "Claude (Anthropic), a", "B": "Claude (Anthropic), b", "C": "Claude (Anthropic), c"}
    return {"provenance": {"parameters": {"measures": ["R@10", "nDCG@10"]}},
            "sets": {"a": _set(4, 0.6, 0.5, 2), "b": _set(8, 0.3, 0.7, 0)},
            "agreement": _agreement(0.9, n=12, observed=0.95),
            "adjudication": _adj(10, 9), "n_pairs": 12, "n_disagreements": 10, "judged_on": "2026-01-02",
            "judged_on_packet_21": "2026-02-03", "n_expected": 12, "expected_judged": 11,
            "assessors": roles, "assessors_packet_21": roles,
            "blindness": {"packets_01_20": "instructions only: gold files", "packet_21": "isolated folders"},
            "gold_rejected": [{"set": "b", "question": "q1", "packet": "21", "text": "t", "doc": "d",
                               "a": 0, "b": 0, "c": None}],
            "packet_21": {"n_known": 3, "n_decoys": 7, "n_pairs": 10, "n_disagreements": 2, "known_rejected_by_both": 1,
                          "adjudication": _adj(2, 1),
                          "agreement": {"all": _agreement(0.5), "known": _agreement(0.4)},
                          "decoys_vs_frozen": {"n": 7, "same_final_grade": 5,
                                               "final": _agreement(0.6, confusion=((3, 0, 0), (2, 1, 0), (0, 0, 1))),
                                               "a": _agreement(0.55)}}}


def test_chart_series_follows_the_sets_and_the_regime(res):
    c = pf.chart_series(res, ["vector", "bm25"], "graded")
    assert list(c["means"]) == ["vector", "bm25"]
    assert c["means"]["bm25"] == pytest.approx([0.4, 0.1]) and c["means"]["vector"] == [0.5, 0.7]
    assert c["ci95"]["vector"][1] == pytest.approx([0.6, 0.8])


def test_pool_rows_and_acceptable_misses(res):
    rows = pf.pool_rows(res)
    assert [r["set"] for r in rows] == ["a", "b"] and rows[1]["pairs"] == 80 and rows[1]["more_than_one"] == 7
    acc = pf.acceptable_misses(res, ["bm25", "vector"])
    assert acc["a"]["bm25"] == {"misses": 2, "acceptable": 1, "share": 0.5, "full_answers": 0}
    assert acc["b"]["bm25"]["share"] is None  # no miss: no share
    assert acc["b"]["vector"]["share"] == 0.75


def test_gold_rejected_keeps_only_the_grades_given(res):
    g = pf.gold_rejected(res)
    assert g["rows"][0]["grades"] == [0, 0]
    assert (g["judged"], g["n_expected"], g["all_judged"]) == (11, 12, False)


def test_graders_round_record_and_records(res):
    assert pf.graders(res) == {"per_pair": 2, "packet_21": 2, "rounds": 2}
    assert pf.round_record(res) == {"n_pairs": 12, "n_disagreements": 10, "judged_on": "2026-01-02"}
    rec = pf.assessor_records(res)
    assert rec["assessors"][0] == ("packets_01_20", "A", "Claude (Anthropic), a") and len(rec["assessors"]) == 6
    assert rec["blindness"][1][0] == "packet_21"


def test_agreement_rows_end_with_the_total(res):
    rows = pf.agreement_rows(res)
    assert [r["set"] for r in rows] == ["a", "b", None]
    assert rows[-1]["n_pairs"] == 12 and rows[-1]["observed"] == 0.95
    assert rows[0]["nonzero"]["linear"]["kappa"] == pytest.approx(0.5) and rows[0]["nonzero"]["n_pairs"] == 5
    assert rows[0]["unweighted"]["kappa"] == pytest.approx(0.65)


def test_confusion_pairs_each_grade_with_its_row(res):
    c = pf.confusion(res)
    assert c["grades"] == [0, 1, 2]
    assert c["sets"][0]["rows"][1] == (1, [1, 2, 0])


def test_adjudications_of_both_rounds(res):
    d = pf.adjudications(res)
    assert d["packets_01_20"]["kind"] == "max" and (d["packets_01_20"]["n"], d["packets_01_20"]["higher"]) == (10, 9)
    assert d["packet_21"]["share"] == 0.5 and d["packet_21"]["kind"] == "neutral"


def test_packet_21(res):
    p = pf.packet_21(res)
    assert p["decoys_per_known"] == 2 and p["judged_on"] == "2026-02-03"
    assert list(p["agreement"]) == ["all", "known"] and list(p["vs_frozen"]) == ["final", "a"]
    assert (p["drift"]["up"], p["drift"]["down"], p["drift"]["same"]) == (2, 0, 5)


def test_regime_tables_mark_the_best_of_each_row(res):
    t = pf.regime_tables(res, ["bm25", "vector"], ["single", "graded"])
    assert [x["set"] for x in t] == ["a", "b"] and t[1]["n_questions"] == 8
    rows = t[0]["rows"]
    assert [(r["regime"], r["measure"]) for r in rows] == [("single", "R@10"), ("single", "nDCG@10"),
                                                            ("graded", "R@10"), ("graded", "nDCG@10")]
    assert rows[0]["best"] == "vector" and rows[1]["best"] == "bm25"
    assert rows[3]["values"]["bm25"] == pytest.approx(0.4)


def test_committed_results():
    res = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    rows = pf.agreement_rows(res)
    assert len(rows) == len(res["sets"]) + 1
    assert rows[-1]["linear"]["kappa"] == res["agreement"]["linear"]["kappa"]
    assert pf.graders(res) == {"per_pair": 2, "packet_21": 2, "rounds": 2}
    p = pf.packet_21(res)
    assert p["drift"]["same"] + p["drift"]["up"] + p["drift"]["down"] == p["drift"]["n"]
