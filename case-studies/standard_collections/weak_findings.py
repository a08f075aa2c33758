"""What the reranking chapter states about the readers taught by each collection's own text
(``rerankers_weak.json``, written by ``train_weak_rerankers.py``, and the encoder × loss
ablation ``rerankers_weak_ablation.json``, written by ``train_weak_ablation.py``): per collection, the declared
primary comparison (RRF of the reader and BM25 over BM25's top 20, against BM25 alone, Holm over
the collections), the same reading of the dense first stage, the lesson (does the reading lift
BM25 more than the dense first stage?) and the reader's AUC beside BM25's. No prose here.
"""

from __future__ import annotations

from collections.abc import Mapping

from gabarito.measure.report import verdict
from gabarito.measure.stats import ALPHA

MEASURE = "nDCG@10"
HARD, RANDOM = "assumed non-relevant", "random, assumed non-relevant"
#: The share of collections the target asks the fused reading to raise significantly.
TARGET_COLLECTIONS = 3


def primary_variant(res: Mapping) -> str:
    how, n = res["provenance"]["parameters"]["primary"]
    return f"{how}@{n}"


def recipes(res: Mapping) -> list[str]:
    return list(res["primary"])


def _stage_row(fold: Mapping, stage: str, key: str, alpha: float) -> dict:
    s = fold["first_stages"][stage]
    test = next(t for t in s["tests_nDCG@10"] if t["a"] == key)
    return {"before": s["means"][stage][MEASURE], "after": s["means"][key][MEASURE], "diff": test["mean_diff"],
            "ci": [test["ci_low"], test["ci_high"]], "p_holm": test["p_holm"],
            "verdict": verdict(test["mean_diff"], test["p_holm"], alpha)}


def rows(res: Mapping, recipe: str = "weak", alpha: float = ALPHA) -> list[dict]:
    """One row per collection: BM25 and its primary reading (Holm over the collections), the
    dense first stage and the same reading (Holm over that stage's variants), the lesson and the AUCs."""
    key = primary_variant(res)
    out = []
    for name, prim in res["primary"][recipe].items():
        fold = res["folds"][name]
        bm25 = {**_stage_row(fold, "bm25", key, alpha), "p_holm": prim["p_holm"],
                "verdict": verdict(prim["diff"], prim["p_holm"], alpha)}
        auc = fold["auc"]
        out.append({
            "collection": name.split("/")[0], "fold": name, "n_queries": fold["first_stages"]["bm25"]["n_queries"],
            "bm25": bm25, "dense": _stage_row(fold, "dense", key, alpha),
            "lesson": {"diff": prim["lesson_diff"], "ci": prim["lesson_ci"], "p_holm": prim["lesson_p_holm"],
                       "verdict": verdict(prim["lesson_diff"], prim["lesson_p_holm"], alpha)},
            "auc": {who: {kind: auc[who]["auc"].get(kind) for kind in (HARD, RANDOM)} for who in ("reader", "bm25")},
            "pseudo_queries": fold["weak_pairs"]["pseudo_queries"],
            "dropped": fold["weak_pairs"]["dropped_as_false_negatives"],
            "steps": fold["training"]["steps"], "train_seconds": fold["training"]["train_seconds"]})
    return out


def headline(res: Mapping, recipe: str = "weak", alpha: float = ALPHA) -> dict:
    """Counts over the collections: the primary reading of BM25 better / worse (Holm), the same
    reading of the dense stage better / worse, and the lesson (BM25 lifted more / less)."""
    rs = rows(res, recipe, alpha)

    def count(part: str, verdict: str) -> list[str]:
        return [r["collection"] for r in rs if r[part]["verdict"] == verdict]

    better = count("bm25", "better")
    return {"recipe": recipe, "variant": primary_variant(res), "total": len(rs),
            "bm25_better": better, "bm25_worse": count("bm25", "worse"),
            "dense_better": count("dense", "better"), "dense_worse": count("dense", "worse"),
            "lesson_more": count("lesson", "better"), "lesson_less": count("lesson", "worse"),
            "target": TARGET_COLLECTIONS, "target_met": len(better) >= TARGET_COLLECTIONS}


def variant_means(res: Mapping, name: str, stage: str) -> list[dict]:
    """Every reading of one first stage in one collection: how, N, mean nDCG@10 and the test
    against the first stage (exploratory: Holm within the stage's variants)."""
    s = res["folds"][name]["first_stages"][stage]
    tests = {t["a"]: t for t in s["tests_nDCG@10"]}
    out = []
    for key, t in tests.items():
        how, n = key.split("@")
        out.append({"how": how, "n": int(n), "mean": s["means"][key][MEASURE], "diff": t["mean_diff"],
                    "p_holm": t["p_holm"]})
    return sorted(out, key=lambda r: (r["how"], r["n"]))


def concept_headline(res: Mapping, alpha: float = ALPHA) -> dict:
    """The flagship's concept reader (``benchmark_rrf/reader_concepts.json``): per way of judging
    (``gold``, ``graded``), the question sets whose nDCG@10 the primary reading of BM25 raised or
    lowered with a Holm-corrected p below ``alpha`` (Holm over the sets), and how many sets."""
    out = {}
    for regime, sets in res["primary"].items():
        verdicts = {name: verdict(r["diff"], r["p_holm"], alpha) for name, r in sets.items()}
        out[regime] = {"total": len(verdicts), "better": [k for k, v in verdicts.items() if v == "better"],
                       "worse": [k for k, v in verdicts.items() if v == "worse"]}
    return out


def ablation_rows(res: Mapping, alpha: float = ALPHA) -> list[dict]:
    """The encoder × loss ablation, one row per (collection, configuration): steps and training
    time, the reader's AUC beside BM25's, and BM25's nDCG@10 alone, with the reader's order
    (replace), fused by RRF (Holm over the collections of the configuration) and convex."""
    n = res["provenance"]["parameters"]["n"]
    out = []
    for cell in res["cells"].values():
        prim = res["primary"][cell["config"]][cell["collection"]]
        means = cell["bm25"]["means"]
        auc = cell["auc"]
        out.append({
            "collection": cell["collection"], "config": cell["config"], "base_model": cell["base_model"],
            "loss": cell["loss"], "steps": cell["training"]["steps"], "stopped_by": cell["training"]["stopped_by"],
            "train_seconds": cell["training"]["train_seconds"],
            "auc": {who: {kind: auc[who]["auc"].get(kind) for kind in (HARD, RANDOM)} for who in ("reader", "bm25")},
            "bm25": means["bm25"][MEASURE], "replace": means[f"replace@{n}"][MEASURE],
            "rrf": means[f"rrf@{n}"][MEASURE], "convex": means[f"convex@{n}"][MEASURE],
            "diff": prim["diff"], "ci": prim["ci"], "p_holm": prim["p_holm"],
            "verdict": verdict(prim["diff"], prim["p_holm"], alpha)})
    return out


def ablation_headline(res: Mapping, alpha: float = ALPHA) -> dict:
    """Per configuration, the collections whose BM25 the fused reading raised / lowered (Holm), and
    the configuration whose reader separates best (mean AUC against hard negatives over the
    collections; ties by name), with the budget all of them shared."""
    rs = ablation_rows(res, alpha)
    configs = sorted({r["config"] for r in rs})
    by = {c: [r for r in rs if r["config"] == c] for c in configs}
    mean_auc = {c: sum(r["auc"]["reader"][HARD] for r in by[c]) / len(by[c]) for c in configs}
    best = min(configs, key=lambda c: (-mean_auc[c], c))
    return {"configs": configs, "collections": sorted({r["collection"] for r in rs}),
            "better": {c: [r["collection"] for r in by[c] if r["verdict"] == "better"] for c in configs},
            "worse": {c: [r["collection"] for r in by[c] if r["verdict"] == "worse"] for c in configs},
            "mean_auc_hard": mean_auc, "best_by_auc": best,
            "steps": res["provenance"]["parameters"]["steps"], "n": res["provenance"]["parameters"]["n"],
            "stopped_by_time": [{"collection": r["collection"], "config": r["config"]} for r in rs
                                if r["stopped_by"] != "step budget"]}
