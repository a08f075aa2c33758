"""What the reranking chapter states of the reader-curve training so far: validation curves only,
folds in the registry's order, the checkpoint validation preferred, and the chart drawn from them."""

from __future__ import annotations

import pytest

from gabarito.core.methods import leaf, reading
from gabarito.measure.reader_validation import point_keys
from gabarito.retrieval.rerank.training import ASSUMED_NEGATIVE
from studies.standard_collections import curve_findings as CF


def _point(pairs: int, fused: float, alone: float, first: float, auc: float) -> dict:
    keys = point_keys(20)
    return {"pairs": pairs, "select": fused, keys["rrf"]: fused, keys["replace"]: alone, keys["first"]: first,
            "questions": 40, "auc": {ASSUMED_NEGATIVE: auc}}


def _fold(held: str, curve: list[dict], best: int, budget: int, device: str = "cpu") -> dict:
    return {"held_out_collection": held, "loss": "bce", "validation_share": 0.2, "device": device,
            "validation_reading": {"how": "rrf", "n": 20, "measure": "nDCG@10", "first_stage": "bm25_arcadedb_english"},
            "training": {"pairs_seen": curve[-1]["pairs"], "config": {"budget_pairs": budget, "checkpoint_pairs": 8000}, "curve": curve,
                         "best": {"pairs": best}, "train_seconds": 120.0, "sessions": [{"device": "cpu"}]}}


@pytest.fixture
def progress():
    cisi = _fold("cisi", [_point(0, .40, .20, .45, .5), _point(8000, .44, .35, .45, .6)], 8000, 16000)
    cran = _fold("cranfield", [_point(0, .42, .30, .46, .5), _point(8000, .50, .44, .46, .7),
                               _point(16000, .48, .45, .46, .8)], 8000, 16000)
    gpu = _fold("cranfield", [_point(0, .42, .30, .46, .5), _point(8000, .49, .43, .46, .7)], 8000, 16000, "cuda")
    return {"folds": {"cisi/bce": cisi, "cranfield/bce/cuda": gpu, "cranfield/bce": cran}}


def test_rows_follow_the_registry_and_take_the_checkpoint_validation_preferred(progress):
    rows = CF.rows(progress)
    # the book's order, not the file's; a fold's GPU run beside its CPU run
    assert [(r["held_out"], r["device"]) for r in rows] == [("cranfield", "cpu"), ("cranfield", "cuda"), ("cisi", "cpu")]
    cran, _, cisi = rows
    assert cran["status"] == "finished" and cisi["status"] == "training"
    assert cran["best"] == .50 and cran["last"] == .48 and cran["best_pairs"] == 8000
    assert cran["gain"] == pytest.approx(.04) and cisi["gain"] == pytest.approx(-.01)
    assert cran["auc_hard"] == (.5, .7) and cran["checkpoints"] == 2 and cran["untrained"] == .42


def test_summary_counts_folds_against_the_declared_family(progress):
    s = CF.summary(progress, declared=5)
    assert s == {"declared": 5, "started": 2, "finished": 1, "above": [("cranfield", "cpu"), ("cranfield", "cuda")],
                 "below": [("cisi", "cpu")],
                 "pairs": (8000, 16000), "budget": 16000}


def test_curves_name_their_methods_as_values(progress):
    c = CF.curves(progress)[2]
    assert (c["held_out"], c["device"]) == ("cisi", "cpu")
    assert c["pairs"] == [0, 8000] and c["fused"] == [.40, .44] and c["alone"] == [.20, .35]
    assert c["first_stage"] == .45
    assert (c["fused_method"], c["alone_method"], c["first_method"]) == (reading("rrf", 20), reading("replace", 20),
                                                                           leaf("bm25_arcadedb_english"))


def test_the_learning_curve_chart_has_one_view_per_collection(progress):
    from gabarito.publish.training_charts import learning_curves

    fig = learning_curves(CF.curves(progress), y_title="nDCG@10 na validação")
    assert len(fig.data) == 9 and [t.visible for t in fig.data] == [True] * 3 + [False] * 6
    menu = fig.layout.updatemenus[0]
    assert [b.label for b in menu.buttons] == ["Cranfield", "Cranfield (GPU)", "CISI"]
    assert list(fig.data[2].y) == [.46, .46] and fig.data[2].line.dash == "dot"


def test_the_plan_is_what_the_training_recorded(progress):
    assert CF.plan(progress) == {"checkpoint": 8000, "share": 0.2, "measure": "nDCG@10", "method": reading("rrf", 20)}


def test_the_two_axes_zeros_do_not_meet_in_the_corner(progress):
    from gabarito.publish.training_charts import learning_curves

    fig = learning_curves(CF.curves(progress), y_title="nDCG@10")
    low, high = fig.layout.xaxis.range
    assert low < 0 < 16000 < high and fig.layout.yaxis.rangemode == "tozero"


# -- the finished results: the declared comparison, as the study's own writer stores it -----------

def _held_out(collection: str, diff: float, p: float) -> dict:
    from gabarito.measure.families import Against
    from gabarito.measure.report import Report

    row = {"measure": "nDCG@10", "a": "rrf@20", "b": "bm25", "mean_diff": diff, "ci_low": diff - 0.02,
           "ci_high": diff + 0.02, "p_randomization": p, "p_holm": p}
    report = Report(metrics={"bm25": {"nDCG@10": 0.4}, "rrf@20": {"nDCG@10": 0.4 + diff},
                             "replace@20": {"nDCG@10": 0.35}, "rrf@100": {"nDCG@10": 0.41}}, tests=(row,), n=50,
                    family=Against("bm25"))
    lesson = {"variant": "rrf@20", "mean_diff": diff / 2, "ci_low": diff / 2 - 0.01, "ci_high": diff / 2 + 0.01,
              "p_randomization": p}
    return {"held_out_collection": collection, "loss": "bce",
            "held_out": {"first_stages": {"bm25": {"report": report.to_dict()}}, "lesson": lesson},
            "training": {"pairs_seen": 60000, "best": {"pairs": 48000}}}


def _results(folds: dict) -> dict:
    from studies.standard_collections.train_reader_curve import primary

    return {"folds": folds, "primary": primary(folds),
            "provenance": {"parameters": {"primary": ["rrf", 20], "secondary": [["replace", 20], ["rrf", 100]]}}}


def test_the_held_out_rows_read_the_primary_holm_over_the_five_and_the_target_counts_them():
    raw = {"cranfield": (0.03, 0.001), "cisi": (0.02, 0.004), "medline": (0.05, 0.02), "npl": (-0.01, 0.3),
           "adi": (0.04, 0.009)}
    res = _results({f"{c}/bce": _held_out(c, d, p) for c, (d, p) in raw.items()})
    rows = CF.held_out_rows(res, "bce")
    assert [r["held_out"] for r in rows] == ["adi", "cranfield", "cisi", "medline", "npl"]  # the registry's order
    by = {r["held_out"]: r for r in rows}
    # Holm over the five raw p (.001 .004 .009 .02 .3): x5, x4, x3, x2, x1, kept monotone
    assert [by[c]["p_holm"] for c in ("cranfield", "cisi", "adi", "medline", "npl")] == \
        pytest.approx([0.005, 0.016, 0.027, 0.04, 0.3])
    assert by["medline"]["verdict"] == "better" and by["npl"]["verdict"] == "same"
    assert by["cranfield"]["primary"] == pytest.approx(0.43) and by["cranfield"]["secondary"][reading("rrf", 100)] == 0.41
    assert by["adi"]["ci"] == (pytest.approx(0.02), pytest.approx(0.06)) and by["adi"]["chosen_pairs"] == 48000
    assert by["medline"]["lesson"]["p_holm"] == pytest.approx(0.04) and by["medline"]["lesson"]["verdict"] == "better"
    assert by["npl"]["lesson"]["diff"] == pytest.approx(-0.005) and by["npl"]["lesson"]["verdict"] == "same"
    t = CF.target(res, "bce")
    assert t["complete"] and t["met"] and sorted(t["better"]) == ["adi", "cisi", "cranfield", "medline"]


def test_a_run_on_fewer_collections_gives_no_holm_p_and_no_verdict():
    res = _results({"adi/bce": _held_out("adi", 0.04, 0.001)})
    (row,) = CF.held_out_rows(res, "bce")
    assert row["p"] == 0.001 and row["p_holm"] is None and row["verdict"] is None
    assert row["lesson"]["p"] == 0.001 and row["lesson"]["p_holm"] is None and row["lesson"]["verdict"] is None
    assert res["primary"]["bce"]["lesson_rows"]["adi/bce"]["diff"] == 0.02
    t = CF.target(res, "bce")
    assert not t["complete"] and not t["met"] and t["better"] == []
