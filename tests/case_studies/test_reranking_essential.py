"""The reranking chapter's first screen ("O essencial"): the help-center half of its finding
(studies.reranking.findings.essential, with the intervals of hit1_intervals) and the classic-
collection half about the cross-encoder trained here (reranker_findings.weak_reader), on small
hand-made results whose answers are known and on the committed results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studies.reranking import findings as PA
from studies.standard_collections import reranker_findings as RA

ROOT = Path(__file__).resolve().parents[2]
CE = "cross-encoder /models/heldout-x-0"


def _res():
    """Four answerable questions, one first stage, two readers (one a cross-encoder), N = 3, with
    the statistics the study stores (:func:`PA.statistics`)."""
    res = _measured()
    return {**res, **PA.statistics(res)}


def _measured():
    return {
        "provenance": {"parameters": {"headline_N": 3}},
        "setup": {"readers": ["r1", CE]},
        "cross_encoder": {"measured": True, "id": CE.removeprefix("cross-encoder ")},
        "first_stages": {"bm25": {"hit@1": 0.5}},
        "per_question": {"bm25": {
            "r1": {"q1": [1, 1], "q2": [2, 1], "q3": [3, 1], "q4": [None, None]},
            CE: {"q1": [1, 2], "q2": [2, 2], "q3": [1, 3], "q4": [None, None]},
        }},
        "headline": [
            {"first_stage": "bm25", "reader": "r1", "N": 3, "before": {"hit@1": 0.5, "mrr": 0.6}, "after": {"hit@1": 0.75, "mrr": 0.8},
             "cutoff1": {"gained": 2, "lost": 0, "p": 0.5}},
            {"first_stage": "bm25", "reader": CE, "N": 3, "before": {"hit@1": 0.5, "mrr": 0.6}, "after": {"hit@1": 0.0, "mrr": 0.4},
             "cutoff1": {"gained": 0, "lost": 2, "p": 0.001}},
        ],
    }


def test_hit1_intervals_read_the_ranks_and_hold_their_means():
    rows = PA.hit1_intervals(_res())
    assert [(r["first_stage"], r["reader"]) for r in rows] == [("bm25", "r1"), ("bm25", CE)]
    r1, ce = rows
    assert (r1["n"], r1["before"], r1["after"], r1["diff"]) == (4, 0.25, 0.75, 0.5)
    assert (ce["before"], ce["after"], ce["diff"]) == (0.5, 0.0, -0.5)
    for r in rows:
        for key, value in (("ci_before", r["before"]), ("ci_after", r["after"]), ("ci_diff", r["diff"])):
            lo, hi = r[key]
            assert lo <= value <= hi
    assert ce["ci_after"] == [0.0, 0.0]  # never first after the cross-encoder


def test_essential_names_the_best_pair_and_the_cross_encoder_s_pairs():
    e = PA.essential(_res())
    assert (e["N"], e["n"], e["n_answerable"], e["better"], e["worse"]) == (3, 2, 4, 0, 1)
    assert e["best"]["reader"] == "r1" and not e["best_kept"]  # p 0.5: not significant
    assert (e["ce"], e["ce_n"], e["ce_worse"]) == (CE, 1, 1)
    assert e["ce_strongest"]["first_stage"] == "bm25"
    res = _res()
    res["setup"]["readers"] = ["r1"]
    assert PA.cross_encoder_reader(res) is None and PA.essential(res)["ce_strongest"] is None


def test_the_committed_finding_agrees_with_the_headline_table():
    res = json.loads((ROOT / "case-studies" / "reranking" / "results.json").read_text(encoding="utf-8"))
    for r, h in zip(PA.hit1_intervals(res), res["headline"]):
        assert (r["first_stage"], r["reader"]) == (h["first_stage"], h["reader"])
        assert r["before"] == pytest.approx(h["before"]["hit@1"]) and r["after"] == pytest.approx(h["after"]["hit@1"])
        assert r["ci_diff"][0] <= r["diff"] <= r["ci_diff"][1]
    e = PA.essential(res)
    hl = PA.headline(res)
    assert (e["better"], e["worse"]) == (len(hl["better"]), len(hl["worse"]))
    assert e["ce"] in res["setup"]["readers"]


def test_weak_reader_spans_the_worse_rows_and_the_held_out_auc():
    tr = json.loads((ROOT / "case-studies" / "standard_collections" / "rerankers.json").read_text(encoding="utf-8"))
    w = RA.weak_reader(tr)
    rows = RA.headline_rows(tr)
    worse = [r for r in rows if r["verdict"] == "worse"]
    assert (w["total"], w["worse"]) == (len(rows), len(worse))
    assert w["worse"] == len(RA.headline(tr)["worse"]) and w["better"] == len(RA.headline(tr)["better"])
    if worse:
        assert w["largest"]["diff"] == min(r["diff"] for r in worse)
        assert w["mildest"]["diff"] == max(r["diff"] for r in worse)
    sep = RA.separability_summary(RA.separability_rows(tr))
    assert w["auc_hard"] == sep["ranges"]["held_out"]["assumed non-relevant"] and w["separates"] == sep["separates"]
    steps = [r["steps"] for r in RA.training_rows(tr)]
    assert w["steps"] == (min(steps), max(steps))
