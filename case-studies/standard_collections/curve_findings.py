"""What the reranking chapter states from the reader-curve training so far
(``rerankers_curve_progress.json``, written by ``train_reader_curve.py`` at every checkpoint): per
held-out collection, the learning curve on **validation questions** (a seeded share of the
training collections' judged questions, never trained on), how far the training has come against
its budget, and the checkpoint validation prefers. No held-out collection's judgments are in that
file: nothing here is a result of the declared comparison (fused reading against BM25 on each
held-out collection), which is measured only when every fold has finished. Rows and numbers only;
the page writes the words.
"""

from __future__ import annotations

from collections.abc import Mapping

from gabarito.core.methods import Method, leaf, reading
from gabarito.inputs.collections.registry import names
from gabarito.measure.reader_validation import point_keys
from gabarito.retrieval.rerank.training import ASSUMED_NEGATIVE as HARD

#: The file the training writes beside the study, and the results file it will write when done.
PROGRESS, RESULTS = "rerankers_curve_progress.json", "rerankers_curve.json"


def primary_family():
    """The primary family ``study.json`` declared for the finished results before training began
    (fused reading against BM25, one comparison per held-out collection)."""
    from gabarito.study.spec import find_study

    return next(f for f in find_study("standard_collections").claims[RESULTS].families if f.primary)


def folds(progress: Mapping) -> list[dict]:
    """The folds in the registry's order of their held-out collections (then by loss, the CPU's
    run before another device's run of the same fold)."""
    order = {c: i for i, c in enumerate(names())}
    return sorted(progress["folds"].values(), key=lambda f: (order.get(f["held_out_collection"], len(order)), f["loss"],
                                                             f["device"] != "cpu", f["device"]))


def fused(fold: Mapping) -> Method:
    """The reading validation selects a checkpoint by (RRF of the reader and BM25 over the top N)."""
    r = fold["validation_reading"]
    return reading(r["how"], r["n"])


def _keys(fold: Mapping) -> dict[str, str]:
    r = fold["validation_reading"]
    return point_keys(r["n"], r["measure"])


def status(fold: Mapping) -> str:
    """``finished`` when the budget of pairs was seen, else ``training``."""
    t = fold["training"]
    return "finished" if t["pairs_seen"] >= t["config"]["budget_pairs"] else "training"


def rows(progress: Mapping) -> list[dict]:
    """One row per run: the held-out collection, the loss, the device, pairs seen against the
    budget (no training time: the machine was shared while it trained), the validation questions, the first stage's validation nDCG@10 (the
    same at every point), the fused reading's before training (the new head's, at 0 pairs), at
    the last point and at the checkpoint validation prefers, and that checkpoint's gain over the
    first stage."""
    out = []
    for f in folds(progress):
        t, k = f["training"], _keys(f)
        curve = t["curve"]
        best = next(p for p in curve if p["pairs"] == t["best"]["pairs"])
        first = curve[0][k["first"]]
        out.append({"held_out": f["held_out_collection"], "loss": f["loss"], "device": f["device"], "status": status(f),
                    "pairs": t["pairs_seen"], "budget": t["config"]["budget_pairs"],
                    "checkpoints": len(curve) - 1,
                    "questions": curve[0]["questions"], "first_stage": first,
                    "untrained": curve[0][k["rrf"]], "last": curve[-1][k["rrf"]], "best": best[k["rrf"]],
                    "best_pairs": best["pairs"], "gain": best[k["rrf"]] - first,
                    "auc_hard": (curve[0]["auc"].get(HARD), best["auc"].get(HARD))})
    return out


def curves(progress: Mapping) -> list[dict]:
    """Per fold (in :func:`folds`' order), its curve as the chart draws it: the held-out
    collection, the device, pairs seen, the fused reading's and the reader alone's validation
    nDCG@10 at each point, the first stage's level, and the three methods as values."""
    out = []
    for f in folds(progress):
        k, curve, r = _keys(f), f["training"]["curve"], f["validation_reading"]
        out.append({"held_out": f["held_out_collection"], "device": f["device"],
                    "pairs": [p["pairs"] for p in curve], "fused": [p[k["rrf"]] for p in curve],
                    "alone": [p[k["replace"]] for p in curve], "first_stage": curve[0][k["first"]],
                    "fused_method": fused(f), "alone_method": reading("replace", r["n"]),
                    "first_method": leaf(r["first_stage"])})
    return out


def summary(progress: Mapping, declared: int) -> dict:
    """How far the training has come: the declared folds (the study's primary family), how many
    held-out collections and losses have started and finished (on any device), the runs whose
    preferred checkpoint is above the first stage on validation (``above``, as ``(held_out,
    device)``) and below it (``below``), and the least and most pairs seen."""
    rs = rows(progress)
    return {"declared": declared, "started": len({(r["held_out"], r["loss"]) for r in rs}),
            "finished": len({(r["held_out"], r["loss"]) for r in rs if r["status"] == "finished"}),
            "above": [(r["held_out"], r["device"]) for r in rs if r["gain"] > 0],
            "below": [(r["held_out"], r["device"]) for r in rs if r["gain"] < 0],
            "pairs": (min(r["pairs"] for r in rs), max(r["pairs"] for r in rs)) if rs else (0, 0),
            "budget": max((r["budget"] for r in rs), default=0)}


def plan(progress: Mapping) -> dict:
    """What every fold shares, as the training recorded it: pairs between checkpoints, the share of
    each training collection's questions kept for validation, the measure and the reading
    validation selects by (a method value)."""
    f = folds(progress)[0]
    r = f["validation_reading"]
    return {"checkpoint": f["training"]["config"]["checkpoint_pairs"], "share": f["validation_share"],
            "measure": r["measure"], "method": fused(f)}


# -- the finished results (rerankers_curve.json): the declared comparison on the held-out collections --

#: How many of the five held-out collections the issue's target asks the fused reading to raise
#: significantly (Holm over the five).
TARGET = 3


def held_out_rows(results: Mapping, loss: str, alpha: float | None = None) -> list[dict]:
    """Per held-out collection of ``loss`` (registry order): BM25 alone and each reading's mean
    nDCG@10 (the primary RRF@20, the secondary replace@20 and RRF@100), the primary difference
    with its interval, raw p and Holm p over the declared five (``None`` when the run held fewer
    collections: no Holm p exists), its verdict, the lesson (the lift over BM25 minus the lift over
    the dense first stage, with its Holm p and verdict), the pairs seen and the checkpoint
    validation chose."""
    from gabarito.measure.report import ALPHA, Report, verdict

    alpha = ALPHA if alpha is None else alpha
    params = results["provenance"]["parameters"]
    primary, secondary = reading(*params["primary"]), [reading(*s) for s in params["secondary"]]
    block = results["primary"][loss]
    holm, lessons = block.get("tests"), block.get("lesson_tests")  # absent when fewer than the declared collections ran
    order = {c: i for i, c in enumerate(names())}
    out = []
    for key, f in sorted(((k, f) for k, f in results["folds"].items() if f["loss"] == loss),
                         key=lambda kf: order.get(kf[1]["held_out_collection"], len(order))):
        report = Report.from_dict(f["held_out"]["first_stages"]["bm25"]["report"])
        c = report.compare(primary, "bm25", "nDCG@10")
        p_holm = holm[key]["p_holm"] if holm else None
        lesson = f["held_out"]["lesson"]
        lesson_holm = lessons[key]["p_holm"] if lessons else None
        out.append({"held_out": f["held_out_collection"], "n": report.n, "bm25": report.mean("bm25", "nDCG@10"),
                    "primary": report.mean(primary, "nDCG@10"),
                    "secondary": {m: report.mean(m, "nDCG@10") for m in secondary},
                    "diff": c.diff, "ci": c.ci, "p": c.p, "p_holm": p_holm,
                    "verdict": None if p_holm is None else verdict(c.diff, p_holm, alpha),
                    "lesson": {"diff": lesson["mean_diff"], "ci": (lesson["ci_low"], lesson["ci_high"]),
                               "p": lesson["p_randomization"], "p_holm": lesson_holm,
                               "verdict": None if lesson_holm is None else verdict(lesson["mean_diff"], lesson_holm, alpha)},
                    "pairs": f["training"]["pairs_seen"], "chosen_pairs": f["training"]["best"]["pairs"]})
    return out


def target(results: Mapping, loss: str) -> dict:
    """The issue's target for ``loss``: the fused reading significantly above BM25 (Holm over the
    declared five) on at least :data:`TARGET` held-out collections. ``complete``: whether the run
    held the declared family (else no verdict is drawn)."""
    rs = held_out_rows(results, loss)
    complete = "tests" in results["primary"][loss]
    better = [r["held_out"] for r in rs if r["verdict"] == "better"]
    return {"complete": complete, "better": better, "worse": [r["held_out"] for r in rs if r["verdict"] == "worse"],
            "needed": TARGET, "met": complete and len(better) >= TARGET, "collections": len(rs)}
