"""What the reranking chapter states about the readers taught by each collection's own text
(``rerankers_weak.json``, written by ``train_weak_rerankers.py``, and the encoder × loss
ablation ``rerankers_weak_ablation.json``, written by ``train_weak_ablation.py``): per collection, the declared
primary comparison (RRF of the reader and BM25 over BM25's top 20, against BM25 alone), the same reading of
the dense first stage, the lesson (does the reading lift BM25 more than the dense first stage?) and the
reader's AUC beside BM25's. No prose here.

The primary comparisons of both recipes (two recipes by five collections) are one family, as
``study.json`` declares it (``claims``): their Holm p is computed by the library
(:func:`gabarito.study.claims.holm_family`) from the raw p the results hold, over the ten. The
ablation is exploratory (selected on its own test, declared so): its p is shown unadjusted and no
verdict is drawn from it.
"""

from __future__ import annotations

from collections.abc import Mapping

from gabarito.core.methods import among, declare, reading
from gabarito.core.page_guard import stored
from gabarito.errors import GabaritoError
from gabarito.measure.readings import readings_at
from gabarito.measure.report import Report, as_report, verdict
from gabarito.measure.stats import ALPHA
from gabarito.study.claims import Family, FileClaims, check_family, holm_family

MEASURE = "nDCG@10"
HARD, RANDOM = "assumed non-relevant", "random, assumed non-relevant"
#: The share of collections the target asks the fused reading to raise significantly.
TARGET_COLLECTIONS = 3
STUDY, WEAK_FILE, ABLATION_FILE = "standard_collections", "rerankers_weak.json", "rerankers_weak_ablation.json"
#: The declared families (``study.json`` claims) these functions read.
PRIMARY_FAMILY = "primary: RRF@20 against BM25, two recipes by five collections"
ABLATION_FAMILY = "RRF@20 against BM25, one per configuration"


def declared(results: str) -> FileClaims:
    """The declared plan of one of this module's results files (``study.json`` claims)."""
    from gabarito.study.spec import find_study

    return find_study(STUDY).claims[results]


def primary_family() -> Family:
    return declared(WEAK_FILE).family(PRIMARY_FAMILY)


def ablation_family() -> Family:
    return declared(ABLATION_FILE).family(ABLATION_FAMILY)


#: Where ``train_weak_rerankers.py`` stores the primary comparisons' Holm p over the declared family.
PRIMARY_HOLM = "primary_declared_holm"


def compute_primary_holm(res: Mapping, family: Family | None = None) -> dict:
    """The primary comparisons' p, Holm over the declared family (both recipes, every collection),
    from the raw p the results hold: ``{"family": name, "p_holm": {"recipe/fold": p}}`` (what the
    study stores as :data:`PRIMARY_HOLM`). Results that hold only part of the family (a quick run,
    ``--folds adi``) get ``{"family": name, "incomplete": why}`` and no Holm p."""
    family = family or primary_family()
    missing = [p for p in check_family(res, family) if "comparisons, declared" in p or "members" in p]
    if missing:
        return {"family": family.name, "incomplete": missing[0]}
    adjusted = {k: p for group in holm_family(res, family).values() for k, p in group.items()}
    return {"family": family.name, "p_holm": adjusted}


def primary_p(res: Mapping, family: Family | None = None) -> dict[str, dict[str, float]]:
    """``{recipe: {fold: p}}``: the primary comparisons' p, Holm over the declared family, as the
    study stored it (:data:`PRIMARY_HOLM`); ``family``: another family, corrected here (a test's)."""
    block = compute_primary_holm(res, family) if family is not None else stored(res, PRIMARY_HOLM)
    if block["family"] != (family or primary_family()).name:
        raise GabaritoError(f"the results' primary family is {block['family']!r}, the study declares "
                            f"{primary_family().name!r}: add it again with --statistics-only")
    if "incomplete" in block:
        raise GabaritoError(f"these results hold only part of the declared primary family ({block['incomplete']}): "
                            "no Holm p to read; run every collection and recipe")
    adjusted = block["p_holm"]
    return {recipe: {fold: adjusted[f"{recipe}/{fold}"] for fold in folds} for recipe, folds in res["primary"].items()}


def primary_variant(res: Mapping) -> str:
    how, n = res["provenance"]["parameters"]["primary"]
    return reading(how, n)


def recipes(res: Mapping) -> list[str]:
    return list(res["primary"])


def stage_report(fold: Mapping, stage: str) -> Report:
    """The Report of one first stage and its readings in a fold (or an ablation cell)."""
    return as_report(fold["first_stages"][stage]["report"] if "first_stages" in fold else fold[stage]["report"])


def _stage_row(fold: Mapping, stage: str, key: str, alpha: float) -> dict:
    report = stage_report(fold, stage)
    test = report.compare(key, stage, MEASURE)
    return {"before": report.mean(stage, MEASURE), "after": report.mean(key, MEASURE), "diff": test.diff,
            "ci": list(test.ci), "p_holm": test.p_holm, "verdict": verdict(test.diff, test.p_holm, alpha)}


def rows(res: Mapping, recipe: str = "weak", alpha: float = ALPHA, family: Family | None = None) -> list[dict]:
    """One row per collection: BM25 and its primary reading (Holm over the declared family of both
    recipes' primary comparisons; ``p`` unadjusted beside it), the dense first stage and the same
    reading (Holm over that stage's variants), the lesson and the AUCs."""
    key = primary_variant(res)
    p_holm = primary_p(res, family)[recipe]
    out = []
    for name, prim in res["primary"][recipe].items():
        fold = res["folds"][name]
        bm25 = {**_stage_row(fold, "bm25", key, alpha), "p": prim["p"], "p_holm": p_holm[name],
                "verdict": verdict(prim["diff"], p_holm[name], alpha)}
        auc = fold["auc"]
        out.append({
            "collection": fold["collection"], "fold": name, "n_queries": stage_report(fold, "bm25").n,
            "bm25": bm25, "dense": _stage_row(fold, "dense", key, alpha),
            "lesson": {"diff": prim["lesson_diff"], "ci": prim["lesson_ci"], "p_holm": prim["lesson_p_holm"],
                       "verdict": verdict(prim["lesson_diff"], prim["lesson_p_holm"], alpha)},
            "auc": {who: {kind: auc[who]["auc"].get(kind) for kind in (HARD, RANDOM)} for who in ("reader", "bm25")},
            "pseudo_queries": fold["weak_pairs"]["pseudo_queries"],
            "dropped": fold["weak_pairs"]["dropped_as_false_negatives"],
            "steps": fold["training"]["steps"], "train_seconds": fold["training"]["train_seconds"]})
    return out


def headline(res: Mapping, recipe: str = "weak", alpha: float = ALPHA, family: Family | None = None) -> dict:
    """Counts over the collections: the primary reading of BM25 better / worse (Holm over the
    declared family), the same reading of the dense stage better / worse, and the lesson (BM25
    lifted more / less)."""
    rs = rows(res, recipe, alpha, family)

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
    report = stage_report(res["folds"][name], stage)
    ran = declare(readings_at(res["provenance"]["parameters"]["ns"]))
    out = []
    for t in report.comparisons(MEASURE, against=stage):
        m = among(t.a, ran)
        out.append({"how": m.how, "n": m.top, "mean": report.mean(t.a, MEASURE), "diff": t.diff, "p_holm": t.p_holm})
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


def ablation_rows(res: Mapping, family: Family | None = None) -> list[dict]:
    """The encoder × loss ablation (exploratory), one row per (collection, configuration): steps
    and training time, the reader's AUC beside BM25's, and BM25's nDCG@10 alone, with the reader's
    order (replace), fused by RRF and convex; the RRF difference with its interval and its p as
    the declared family has it (``p_label``: unadjusted for a family of one). No verdict: the
    configurations were selected on this test and never compared with each other."""
    family = family or ablation_family()
    p_of = holm_family(res, family)
    n = res["provenance"]["parameters"]["n"]
    out = []
    for cell in res["cells"].values():
        prim = res["primary"][cell["config"]][cell["collection"]]
        group = p_of.get((cell["config"],)) or p_of[()]
        report = stage_report(cell, "bm25")
        auc = cell["auc"]
        out.append({
            "collection": cell["collection"], "config": cell["config"], "base_model": cell["base_model"],
            "loss": cell["loss"], "steps": cell["training"]["steps"], "stopped_by": cell["training"]["stopped_by"],
            "train_seconds": cell["training"]["train_seconds"],
            "auc": {who: {kind: auc[who]["auc"].get(kind) for kind in (HARD, RANDOM)} for who in ("reader", "bm25")},
            "bm25": report.mean("bm25", MEASURE),
            **{how: report.mean(reading(how, n), MEASURE) for how in ("replace", "rrf", "convex")},
            "diff": prim["diff"], "ci": prim["ci"], "p": group[cell["collection"]], "corrected": family.correction})
    return out


def ablation_configs(res: Mapping) -> dict[str, dict]:
    """Each configuration of the ablation, as its cells record it: ``{config: {"base_model", "loss"}}``
    (what a page names it by, never by taking its key apart)."""
    out = {}
    for cell in res["cells"].values():
        parts = {"base_model": cell["base_model"], "loss": cell["loss"]}
        if out.setdefault(cell["config"], parts) != parts:
            raise GabaritoError(f"ablation configuration {cell['config']!r} recorded with two models or losses")
    return out


def ablation_headline(res: Mapping, family: Family | None = None) -> dict:
    """The configurations and collections, the configuration whose reader separates best (mean
    AUC against hard negatives over the collections; ties by name: a choice made on the test's own
    judged pairs, which the declaration states) and the budget all of them shared. No count of
    configurations that "improve": a difference in significance is not a tested difference."""
    rs = ablation_rows(res, family)
    configs = sorted({r["config"] for r in rs})
    by = {c: [r for r in rs if r["config"] == c] for c in configs}
    mean_auc = {c: sum(r["auc"]["reader"][HARD] for r in by[c]) / len(by[c]) for c in configs}
    best = min(configs, key=lambda c: (-mean_auc[c], c))
    return {"configs": configs, "collections": sorted({r["collection"] for r in rs}),
            "diff": {c: {r["collection"]: r["diff"] for r in by[c]} for c in configs},
            "mean_auc_hard": mean_auc, "best_by_auc": best,
            "steps": res["provenance"]["parameters"]["steps"], "n": res["provenance"]["parameters"]["n"],
            "stopped_by_time": [{"collection": r["collection"], "config": r["config"]} for r in rs
                                if r["stopped_by"] != "step budget"]}


def main_study_diffs(weak: Mapping, collections: list[str], recipe: str = "weak") -> dict:
    """The main weak study's primary difference on some collections (``rerankers_weak.json``: the
    same recipe as the ablation's MiniLM with the pointwise loss, at its own step budget), for the
    page to set the ablation beside it: ``{"steps", "diff": {collection: diff}}``."""
    return {"steps": weak["provenance"]["parameters"]["steps"],
            "diff": {c: weak["primary"][recipe][f"{c}/{recipe}"]["diff"] for c in collections}}


def bm25_variant_table(res: Mapping, recipe: str = "weak") -> dict:
    """The table of BM25's readings, collection by collection: ``ns`` (every N read, in the
    study's order) and ``rows``, per collection, BM25 alone (``before``) and the mean of each
    reading (``means[(how, n)]``)."""
    return {"ns": list(res["provenance"]["parameters"]["ns"]),
            "rows": [{"collection": res["folds"][name]["collection"],
                      "before": stage_report(res["folds"][name], "bm25").mean("bm25", MEASURE),
                      "means": {(v["how"], v["n"]): v["mean"] for v in variant_means(res, name, "bm25")}}
                     for name in res["primary"][recipe]]}


def judged_others(res: Mapping, recipe: str = "weak+judged") -> int:
    """How many other collections' judged pairs each reader of ``recipe`` adds to the pairs of the
    collection it reads again: every collection the recipe reads but that one."""
    return len(res["primary"][recipe]) - 1
