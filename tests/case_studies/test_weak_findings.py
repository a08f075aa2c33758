"""The readers taught by each collection's own text: rows and headline on hand-made results."""

from __future__ import annotations

import json

import pytest

from gabarito.errors import GabaritoError
from gabarito.measure.families import Against
from gabarito.measure.report import Report
from gabarito.publish.claims import RAW_P, p_header
from gabarito.study.claims import Family
from studies.standard_collections import weak_findings as wf

#: The hand-made results' family: the four primary comparisons, Holm computed by the library.
FAMILY = Family(name="fixture", at=("primary", "*", "*"), size=4, correction="holm", computed="library")


def _stage(stage, before, after, diff, p):
    """A first stage's Report block (what ``readings.stage_report`` stores), made by hand."""
    tests = ({"measure": "nDCG@10", "a": "replace@20", "b": stage, "mean_diff": -0.1, "ci_low": -0.2,
              "ci_high": 0.0, "p_holm": 0.01},
             {"measure": "nDCG@10", "a": "rrf@20", "b": stage, "mean_diff": diff, "ci_low": diff - 0.02,
              "ci_high": diff + 0.02, "p_holm": p})
    report = Report(metrics={stage: {"nDCG@10": before}, "rrf@20": {"nDCG@10": after},
                             "replace@20": {"nDCG@10": before - 0.1}}, tests=tests, n=10, family=Against(stage))
    return {"report": report.to_dict()}


def _fold(collection, bm25_diff, dense_diff, dense_p):
    auc = {"auc": {wf.HARD: 0.6, wf.RANDOM: 0.9}}
    return {"collection": collection, "first_stages": {"bm25": _stage("bm25", 0.3, 0.3 + bm25_diff, bm25_diff, 0.5),
                             "dense": _stage("dense", 0.4, 0.4 + dense_diff, dense_diff, dense_p)},
            "auc": {"reader": auc, "bm25": {"auc": {wf.HARD: 0.4, wf.RANDOM: 0.95}}},
            "weak_pairs": {"pseudo_queries": 100, "dropped_as_false_negatives": 7},
            "training": {"steps": 250, "train_seconds": 300.0}}


def _primary(diff, p, lesson, lesson_p):
    return {"diff": diff, "ci": [diff - 0.02, diff + 0.02], "p": p, "p_holm": p, "lesson_diff": lesson,
            "lesson_ci": [lesson - 0.01, lesson + 0.01], "lesson_p_holm": lesson_p}


RES = {
    "provenance": {"parameters": {"primary": ["rrf", 20], "ns": [20]}},
    "folds": {"cranfield/weak": _fold("cranfield", 0.05, 0.01, 0.3), "cisi/weak": _fold("cisi", 0.03, -0.04, 0.01),
              "npl/weak": _fold("npl", -0.02, 0.0, 1.0), "adi/weak": _fold("adi", 0.04, 0.02, 0.2)},
    "primary": {"weak": {"cranfield/weak": _primary(0.05, 0.004, 0.04, 0.02),
                         "cisi/weak": _primary(0.03, 0.03, 0.07, 0.001),
                         "npl/weak": _primary(-0.02, 0.04, -0.02, 0.3),
                         "adi/weak": _primary(0.04, 0.2, 0.02, 0.6)}},
}


def test_rows_read_the_primary_test_with_holm_over_the_declared_family_and_the_dense_test_within_its_stage():
    rows = {r["collection"]: r for r in wf.rows(RES, family=FAMILY)}
    b = rows["cranfield"]["bm25"]
    assert (b["before"], b["after"], b["diff"]) == (0.3, pytest.approx(0.35), 0.05)
    assert b["ci"] == pytest.approx([0.03, 0.07])
    # Holm over the family's four raw p (.004 .03 .04 .2), not the stage's 0.5 nor the stored p_holm
    assert (b["p"], b["p_holm"], b["verdict"]) == (0.004, pytest.approx(0.016), "better")
    assert rows["cisi"]["bm25"]["p_holm"] == pytest.approx(0.09) and rows["cisi"]["bm25"]["verdict"] == "same"
    assert rows["cisi"]["dense"]["verdict"] == "worse" and rows["cisi"]["dense"]["p_holm"] == 0.01
    assert rows["npl"]["bm25"]["verdict"] == "same" and rows["adi"]["bm25"]["verdict"] == "same"
    assert rows["cranfield"]["auc"] == {"reader": {wf.HARD: 0.6, wf.RANDOM: 0.9},
                                        "bm25": {wf.HARD: 0.4, wf.RANDOM: 0.95}}
    assert rows["cranfield"]["lesson"]["verdict"] == "better" and rows["npl"]["lesson"]["verdict"] == "same"


def test_the_headline_counts_collections_and_says_whether_the_target_was_met():
    h = wf.headline(RES, family=FAMILY)
    assert (h["bm25_better"], h["bm25_worse"]) == (["cranfield"], [])
    assert (h["dense_better"], h["dense_worse"]) == ([], ["cisi"])
    assert h["lesson_more"] == ["cranfield", "cisi"] and h["lesson_less"] == []
    assert h["total"] == 4 and h["variant"] == "rrf@20" and h["target_met"] is False
    more = {**RES, "primary": {"weak": {**RES["primary"]["weak"], "adi/weak": _primary(0.04, 0.001, 0.0, 1.0),
                                        "cisi/weak": _primary(0.03, 0.002, 0.07, 0.001)}}}
    assert wf.headline(more, family=FAMILY)["target_met"] is True


def test_a_results_file_without_the_declared_family_is_refused_in_one_line():
    five = Family(name="five", at=("primary", "*", "*"), size=5, correction="holm", computed="library")
    with pytest.raises(GabaritoError, match="only part of the declared primary family.*4 comparisons, declared 5"):
        wf.rows(RES, family=five)


def test_the_committed_primary_comparisons_are_one_family_of_ten():
    """Issue 41 item 2: over the ten primary tests (two recipes by five collections), ADI's weak
    reader is p .085, not the .043 of Holm over its recipe's five."""
    res = json.loads((wf_dir() / "rerankers_weak.json").read_text(encoding="utf-8"))
    assert wf.primary_family().size == 10 and p_header(wf.primary_family()) == "p de Holm"
    adi = {r["collection"]: r for r in wf.rows(res)}["adi"]["bm25"]
    assert adi["p_holm"] == pytest.approx(0.0852, abs=5e-4) and adi["verdict"] == "same"
    assert res["primary"]["weak"]["adi/weak"]["p_holm"] == pytest.approx(0.0426, abs=5e-4)  # the file's 5 + 5
    assert wf.headline(res)["bm25_worse"] == ["cranfield", "npl"]


def wf_dir():
    from pathlib import Path

    return Path(wf.__file__).resolve().parent


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
            "bm25": {"report": Report(metrics={k: {"nDCG@10": v} for k, v in means.items()}, n=10,
                                      family=Against("bm25")).to_dict()}}


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


ABLATION_FAMILY = Family(name="fixture", at=("primary", "*", "*"), split=(0,), size=2, correction="holm")


def test_ablation_rows_read_each_configuration_beside_bm25_with_the_declared_p_and_no_verdict():
    rows = {(r["collection"], r["config"]): r for r in wf.ablation_rows(ABLATION, ABLATION_FAMILY)}
    r = rows[("medline", "minilm/bce")]
    assert (r["bm25"], r["replace"], r["rrf"], r["convex"]) == (0.4, 0.3, pytest.approx(0.44), 0.41)
    assert (r["diff"], r["p"], r["corrected"]) == (0.04, pytest.approx(0.02), "holm")
    assert rows[("medline", "mpnet/bce")]["p"] == pytest.approx(0.08)  # .04 alone, .08 after Holm over two
    assert all("verdict" not in row and "p_holm" not in row for row in rows.values())
    assert r["auc"]["reader"][wf.HARD] == 0.61 and r["auc"]["bm25"][wf.RANDOM] == 0.9


def test_a_family_of_one_is_shown_unadjusted():
    one = {**ABLATION, "cells": {k: v for k, v in ABLATION["cells"].items() if k.startswith("medline")},
           "primary": {c: {"medline": v["medline"]} for c, v in ABLATION["primary"].items()}}
    fam = Family(name="one", at=("primary", "*", "*"), split=(0,), size=1, correction="none")
    rows = {r["config"]: r for r in wf.ablation_rows(one, fam)}
    assert rows["mpnet/bce"]["p"] == 0.04 and rows["mpnet/bce"]["corrected"] == "none"  # the raw p, not .08
    assert p_header(fam) == RAW_P


def test_ablation_headline_names_the_best_separating_configuration_and_no_verdict_from_significance():
    h = wf.ablation_headline(ABLATION, ABLATION_FAMILY)
    assert h["configs"] == ["minilm/bce", "mpnet/bce"] and h["collections"] == ["adi", "medline"]
    assert "better" not in h and "worse" not in h  # "X significant, Y not" is not a tested difference
    assert h["diff"] == {"minilm/bce": {"adi": -0.05, "medline": 0.04}, "mpnet/bce": {"adi": 0.01, "medline": 0.03}}
    assert h["mean_auc_hard"]["mpnet/bce"] == pytest.approx(0.61) and h["best_by_auc"] == "mpnet/bce"
    assert h["stopped_by_time"] == [{"collection": "medline", "config": "mpnet/bce"}] and (h["steps"], h["n"]) == (100, 20)


def test_the_committed_ablation_is_exploratory_its_p_unadjusted_and_its_selection_stated():
    from gabarito.publish.claims import selection_text

    res = json.loads((wf_dir() / "rerankers_weak_ablation.json").read_text(encoding="utf-8"))
    decl = wf.declared(wf.ABLATION_FILE)
    assert decl.all_exploratory and [s.on for s in decl.selection] == ["test", "test"]
    assert "MEDLINE" in selection_text(decl)
    rows = {r["config"]: r for r in wf.ablation_rows(res)}
    assert rows["mpnet/bce"]["p"] == res["primary"]["mpnet/bce"]["medline"]["p"]
    assert p_header(wf.ablation_family()) == RAW_P
    base = wf.main_study_diffs(json.loads((wf_dir() / "rerankers_weak.json").read_text(encoding="utf-8")), ["medline"])
    assert base["steps"] == 250 and base["diff"]["medline"] == pytest.approx(0.041, abs=5e-4)


def test_the_bm25_variant_table_lists_each_collection_alone_and_each_reading_by_how_and_n():
    got = wf.bm25_variant_table(RES)
    assert got["ns"] == [20]
    assert [r["collection"] for r in got["rows"]] == ["cranfield", "cisi", "npl", "adi"]
    cranfield = got["rows"][0]
    assert cranfield["before"] == pytest.approx(0.3)
    assert cranfield["means"] == {("replace", 20): pytest.approx(0.2), ("rrf", 20): pytest.approx(0.35)}


def test_judged_others_counts_every_collection_of_the_recipe_but_the_one_read_again():
    res = {"primary": {"weak+judged": {f"{c}/weak+judged": {} for c in ("adi", "cisi", "npl")}}}
    assert wf.judged_others(res) == 2
    assert wf.judged_others({"primary": {"weak": {"adi/weak": {}}}}, "weak") == 0


def test_the_committed_variant_table_and_judged_count_read_as_the_page_reads_them():
    res = json.loads((wf_dir() / "rerankers_weak.json").read_text(encoding="utf-8"))
    table = wf.bm25_variant_table(res)
    assert table["ns"] == [10, 20, 50, 100]
    assert [r["before"] for r in table["rows"]] == [r["bm25"]["before"] for r in wf.rows(res)]
    assert {k for r in table["rows"] for k in r["means"]} == {(h, n) for h in ("replace", "rrf", "convex")
                                                              for n in table["ns"]}
    assert wf.judged_others(res) == 4  # five collections: each reader learns from the other four's judgments


def test_ablation_configurations_are_named_by_their_recorded_model_and_loss_never_by_their_key():
    cell = {"collection": "adi", "config": "x/y", "base_model": "org/model-a", "loss": "bce"}
    res = {"cells": {"adi/x/y": cell, "npl/x/y": {**cell, "collection": "npl"},
                     "adi/z": {**cell, "config": "z", "loss": "grouped"}}}
    assert wf.ablation_configs(res) == {"x/y": {"base_model": "org/model-a", "loss": "bce"},
                                        "z": {"base_model": "org/model-a", "loss": "grouped"}}
    res["cells"]["npl/x/y"] = {**cell, "collection": "npl", "loss": "grouped"}
    with pytest.raises(GabaritoError, match="'x/y' recorded with two models or losses"):
        wf.ablation_configs(res)
