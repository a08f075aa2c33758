"""The readers taught by each collection's own text: rows and headline on hand-made results."""

from __future__ import annotations

import pytest

from studies.standard_collections import weak_findings as wf


def _stage(stage, before, after, diff, p):
    return {"n_queries": 10, "means": {stage: {"nDCG@10": before}, "rrf@20": {"nDCG@10": after},
                                       "replace@20": {"nDCG@10": before - 0.1}},
            "tests_nDCG@10": [{"a": "replace@20", "b": stage, "mean_diff": -0.1, "ci_low": -0.2, "ci_high": 0.0,
                               "p_holm": 0.01},
                              {"a": "rrf@20", "b": stage, "mean_diff": diff, "ci_low": diff - 0.02,
                               "ci_high": diff + 0.02, "p_holm": p}]}


def _fold(bm25_diff, dense_diff, dense_p):
    auc = {"auc": {wf.HARD: 0.6, wf.RANDOM: 0.9}}
    return {"first_stages": {"bm25": _stage("bm25", 0.3, 0.3 + bm25_diff, bm25_diff, 0.5),
                             "dense": _stage("dense", 0.4, 0.4 + dense_diff, dense_diff, dense_p)},
            "auc": {"reader": auc, "bm25": {"auc": {wf.HARD: 0.4, wf.RANDOM: 0.95}}},
            "weak_pairs": {"pseudo_queries": 100, "dropped_as_false_negatives": 7},
            "training": {"steps": 250, "train_seconds": 300.0}}


def _primary(diff, p, lesson, lesson_p):
    return {"diff": diff, "ci": [diff - 0.02, diff + 0.02], "p": p, "p_holm": p, "lesson_diff": lesson,
            "lesson_ci": [lesson - 0.01, lesson + 0.01], "lesson_p_holm": lesson_p}


RES = {
    "provenance": {"parameters": {"primary": ["rrf", 20]}},
    "folds": {"cranfield/weak": _fold(0.05, 0.01, 0.3), "cisi/weak": _fold(0.03, -0.04, 0.01),
              "npl/weak": _fold(-0.02, 0.0, 1.0), "adi/weak": _fold(0.04, 0.02, 0.2)},
    "primary": {"weak": {"cranfield/weak": _primary(0.05, 0.004, 0.04, 0.02),
                         "cisi/weak": _primary(0.03, 0.03, 0.07, 0.001),
                         "npl/weak": _primary(-0.02, 0.04, -0.02, 0.3),
                         "adi/weak": _primary(0.04, 0.2, 0.02, 0.6)}},
}


def test_rows_read_the_primary_test_across_collections_and_the_dense_test_within_its_stage():
    rows = {r["collection"]: r for r in wf.rows(RES)}
    b = rows["cranfield"]["bm25"]
    assert (b["before"], b["after"], b["diff"]) == (0.3, pytest.approx(0.35), 0.05)
    assert b["ci"] == pytest.approx([0.03, 0.07])
    assert (b["p_holm"], b["verdict"]) == (0.004, "better")  # Holm over the collections, not the stage's 0.5
    assert rows["cisi"]["dense"]["verdict"] == "worse" and rows["cisi"]["dense"]["p_holm"] == 0.01
    assert rows["npl"]["bm25"]["verdict"] == "worse" and rows["adi"]["bm25"]["verdict"] == "same"
    assert rows["cranfield"]["auc"] == {"reader": {wf.HARD: 0.6, wf.RANDOM: 0.9},
                                        "bm25": {wf.HARD: 0.4, wf.RANDOM: 0.95}}
    assert rows["cranfield"]["lesson"]["verdict"] == "better" and rows["npl"]["lesson"]["verdict"] == "same"


def test_the_headline_counts_collections_and_says_whether_the_target_was_met():
    h = wf.headline(RES)
    assert (h["bm25_better"], h["bm25_worse"]) == (["cranfield", "cisi"], ["npl"])
    assert (h["dense_better"], h["dense_worse"]) == ([], ["cisi"])
    assert h["lesson_more"] == ["cranfield", "cisi"] and h["lesson_less"] == []
    assert h["total"] == 4 and h["variant"] == "rrf@20" and h["target_met"] is False
    more = {**RES, "primary": {"weak": {**RES["primary"]["weak"], "adi/weak": _primary(0.04, 0.01, 0.0, 1.0)}}}
    assert wf.headline(more)["target_met"] is True


def test_variant_means_list_every_reading_of_a_stage():
    got = wf.variant_means(RES, "cranfield/weak", "bm25")
    assert [(r["how"], r["n"]) for r in got] == [("replace", 20), ("rrf", 20)]
    assert got[1]["mean"] == pytest.approx(0.35) and got[0]["p_holm"] == 0.01


def test_the_concept_headline_counts_question_sets_per_way_of_judging():
    res = {"primary": {"gold": {"main": {"diff": -0.3, "p_holm": 0.001}, "published": {"diff": -0.05, "p_holm": 0.4},
                                "disjoint": {"diff": 0.01, "p_holm": 0.01}},
                       "graded": {"main": {"diff": -0.1, "p_holm": 0.01}}}}
    got = wf.concept_headline(res)
    assert got == {"gold": {"total": 3, "better": ["disjoint"], "worse": ["main"]},
                   "graded": {"total": 1, "better": [], "worse": ["main"]}}


def _cell(collection, config, auc_hard, diff, stopped="step budget"):
    means = {"bm25": 0.4, "replace@20": 0.3, "rrf@20": 0.4 + diff, "convex@20": 0.41}
    return {"collection": collection, "config": config, "base_model": "m", "loss": config.split("/")[1],
            "training": {"steps": 100, "stopped_by": stopped, "train_seconds": 60.0},
            "auc": {"reader": {"auc": {wf.HARD: auc_hard, wf.RANDOM: 0.7}}, "bm25": {"auc": {wf.HARD: 0.5, wf.RANDOM: 0.9}}},
            "bm25": {"means": {k: {"nDCG@10": v} for k, v in means.items()}}}


ABLATION = {
    "provenance": {"parameters": {"n": 20, "steps": 100}},
    "cells": {"adi/minilm/bce": _cell("adi", "minilm/bce", 0.55, -0.05),
              "medline/minilm/bce": _cell("medline", "minilm/bce", 0.61, 0.04),
              "adi/mpnet/bce": _cell("adi", "mpnet/bce", 0.62, 0.01),
              "medline/mpnet/bce": _cell("medline", "mpnet/bce", 0.60, 0.03, stopped="time guard")},
    "primary": {"minilm/bce": {"adi": {"diff": -0.05, "ci": [-0.08, -0.02], "p": 0.01, "p_holm": 0.02},
                               "medline": {"diff": 0.04, "ci": [0.01, 0.07], "p": 0.02, "p_holm": 0.02}},
                "mpnet/bce": {"adi": {"diff": 0.01, "ci": [-0.02, 0.04], "p": 0.5, "p_holm": 0.5},
                              "medline": {"diff": 0.03, "ci": [0.0, 0.06], "p": 0.04, "p_holm": 0.08}}},
}


def test_ablation_rows_read_each_configuration_beside_bm25():
    rows = {(r["collection"], r["config"]): r for r in wf.ablation_rows(ABLATION)}
    r = rows[("medline", "minilm/bce")]
    assert (r["bm25"], r["replace"], r["rrf"], r["convex"]) == (0.4, 0.3, pytest.approx(0.44), 0.41)
    assert (r["diff"], r["p_holm"], r["verdict"]) == (0.04, 0.02, "better")
    assert rows[("medline", "mpnet/bce")]["verdict"] == "same"  # p .04 alone, .08 after Holm
    assert rows[("adi", "minilm/bce")]["verdict"] == "worse"
    assert r["auc"]["reader"][wf.HARD] == 0.61 and r["auc"]["bm25"][wf.RANDOM] == 0.9


def test_ablation_headline_names_the_best_separating_configuration_and_any_early_stop():
    h = wf.ablation_headline(ABLATION)
    assert h["configs"] == ["minilm/bce", "mpnet/bce"] and h["collections"] == ["adi", "medline"]
    assert h["better"] == {"minilm/bce": ["medline"], "mpnet/bce": []}
    assert h["worse"] == {"minilm/bce": ["adi"], "mpnet/bce": []}
    assert h["mean_auc_hard"]["mpnet/bce"] == pytest.approx(0.61) and h["best_by_auc"] == "mpnet/bce"
    assert h["stopped_by_time"] == [{"collection": "medline", "config": "mpnet/bce"}] and (h["steps"], h["n"]) == (100, 20)
