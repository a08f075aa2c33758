"""The headline finding of each chapter, computed from its results, for the chapter and the home page.

Each function takes a chapter's results (as :func:`gabarito.publish.provenance.load_results`
returns them) and returns the numbers its headline needs, nothing written: the pages write the
sentences. Where a headline counts significant differences among many comparisons, the p-values
are corrected for the number of comparisons (Holm) here, once.
"""

from __future__ import annotations

from typing import Mapping

from gabarito.measure.stats import ALPHA, holm


def flagship(results: Mapping) -> dict:
    """The flagship's main set: how often each method puts the target first and in the top-k."""
    params = results["provenance"]["parameters"]
    k = params["k"]
    fused = f"rrf@{k}"
    main = results["sets"]["main"]
    m = main["metrics"]
    pick = {"bm25": "bm25", "vector": "vector", "fused": fused}
    per_set = {}
    for key, rs in results["sets"].items():
        sm = rs["metrics"]
        best = max(("bm25", "vector"), key=lambda x: (sm[x][f"RR@{k}"], x == "bm25"))
        per_set[key] = {"n": rs["n"], "best_single": best, "rk": {a: sm[b][f"R@{k}"] for a, b in pick.items()}}
    return {"n": main["n"], "n_extended": results["sets"]["extended"]["n"], "k": k, "fused": fused,
            "r1": {a: m[b]["R@1"] for a, b in pick.items()}, "rk": {a: m[b][f"R@{k}"] for a, b in pick.items()},
            "mrr": {a: m[b][f"RR@{k}"] for a, b in pick.items()}, "sets": per_set,
            "best_vector_sets": [s for s, v in per_set.items() if v["best_single"] == "vector"]}


def _by_label(results: Mapping, label: str) -> Mapping:
    for runs in results["groups"].values():
        for r in runs:
            if r["tuning"]["config"]["label"] == label:
                return r
    raise KeyError(label)


def evaluate(results: Mapping) -> dict:
    """The evaluate chapter: the configuration chosen on the tuning questions, and how it did on
    the held-out ones."""
    chosen = _by_label(results, results["chosen"]["label"])
    t, h = chosen["tuning"]["summary"], chosen["heldout"]["summary"]
    return {"label": results["chosen"]["label"], "n_tuning": t["n_answerable"], "n_heldout": h["n_answerable"],
            "tuning": {m: t[m]["value"] for m in ("top1", "top5", "mrr")},
            "heldout": {m: h[m]["value"] for m in ("top1", "top5", "mrr")},
            "heldout_ci": {m: h[m]["ci95"] for m in ("top1", "top5", "mrr")}}


def reranking(results: Mapping, alpha: float = ALPHA) -> dict:
    """The reranking chapter: which (first stage, reader) pairs change the first-place hits, with
    the exact sign test's p-value corrected for all the pairs at once (Holm).

    Returns ``{"N", "n", "rows": [{"first_stage", "reader", "gained", "lost", "p", "p_holm",
    "before", "after"}], "better", "worse", "better_raw", "worse_raw"}`` (the last four as lists
    of rows: significant at ``alpha`` after and before the correction)."""
    rows = []
    for h in results["headline"]:
        c = h["cutoff1"]
        rows.append({"first_stage": h["first_stage"], "reader": h["reader"], "gained": c["gained"], "lost": c["lost"],
                     "p": c["p"], "before": h["before"], "after": h["after"]})
    adjusted = holm({i: r["p"] for i, r in enumerate(rows)}) if rows else {}
    for i, r in enumerate(rows):
        r["p_holm"] = adjusted[i]

    def pick(key: str, up: bool) -> list[dict]:
        return [r for r in rows if r[key] < alpha and (r["gained"] > r["lost"]) == up and r["gained"] != r["lost"]]

    return {"N": results["provenance"]["parameters"]["headline_N"], "n": len(rows), "rows": rows,
            "better": pick("p_holm", True), "worse": pick("p_holm", False),
            "better_raw": pick("p", True), "worse_raw": pick("p", False)}


def _test(tests, a: str, b: str):
    for t in tests:
        if {t["a"], t["b"]} == {a, b}:
            sign = 1 if t["a"] == a else -1
            return {"diff": sign * t["mean_diff"], "p_holm": t["p_holm"], "dz": sign * t["dz"]}
    return None


def collections(results: Mapping, fused: str = "rrf_mpnet", dense: str = "dense_mpnet",
                measure: str = "nDCG@10", alpha: float = ALPHA) -> dict:
    """The classic collections: in each, ``fused`` against the BM25 that went into it and against
    ``dense``, on ``measure``, with the collection's Holm-corrected p-values.

    Returns ``{"rows": [{"collection", "bm25", "vs_bm25", "vs_dense", "beats_both",
    "beats_both_significant"}], "beats_both", "beats_both_significant", "n"}``."""
    rows = []
    for name, col in results["collections"].items():
        bm25 = col["rrf_bm25_input"]["chosen"]
        vs_bm25 = _test(col["tests"][measure], fused, bm25)
        vs_dense = _test(col["tests"][measure], fused, dense)
        both = bool(vs_bm25 and vs_dense and vs_bm25["diff"] > 0 and vs_dense["diff"] > 0)
        rows.append({"collection": name, "bm25": bm25, "vs_bm25": vs_bm25, "vs_dense": vs_dense, "beats_both": both,
                     "beats_both_significant": both and vs_bm25["p_holm"] < alpha and vs_dense["p_holm"] < alpha,
                     "values": {m: col["metrics"][m][measure] for m in (fused, bm25, dense)}})
    return {"rows": rows, "n": len(rows), "measure": measure,
            "beats_both": sum(r["beats_both"] for r in rows),
            "beats_both_significant": sum(r["beats_both_significant"] for r in rows)}


def dates(all_results: Mapping[str, Mapping]) -> tuple[str, str]:
    """The first and last measurement dates (ISO) among several results files."""
    from gabarito.publish.provenance import provenance_of

    found = sorted(str(provenance_of(r)["date"]) for r in all_results.values() if provenance_of(r).get("date"))
    return found[0], found[-1]


def judgments(results: Mapping, measure: str = "nDCG@10") -> dict:
    """The judgments chapter: the range of the assessors' linearly weighted kappa over the gold
    sets, how many of BM25's wrong first places were judged acceptable (grade >= 1), and the gold
    sets where the order of the methods by ``measure`` changes from the single answer to graded
    judgments."""
    sets = list(results["sets"])
    kappas = [results["sets"][s]["agreement"]["linear"]["kappa"] for s in sets]
    misses = [results["sets"][s]["acceptable_misses"]["bm25"] for s in sets]
    changed = [s for s in sets if results["sets"][s]["regimes"]["single"]["order"][measure]
               != results["sets"][s]["regimes"]["graded"]["order"][measure]]
    return {"sets": sets, "kappa_min": min(kappas), "kappa_max": max(kappas),
            "bm25_misses": sum(m["misses"] for m in misses), "bm25_acceptable": sum(m["acceptable"] for m in misses),
            "order_changed": changed}


def trained_reranker(results: Mapping, measure: str = "nDCG@10", n: int = 20, alpha: float = ALPHA) -> dict:
    """The cross-encoder trained here (``rerankers.json``): over every (held-out collection,
    first stage), how many the second reading of the top ``n`` improved or worsened on
    ``measure`` with a Holm-corrected p below ``alpha``."""
    better, worse, total = [], [], 0
    for held, fold in results["folds"].items():
        for stage, s in fold["first_stages"].items():
            total += 1
            name = f"{stage}+ce@{n}"
            t = next(t for t in s["tests"] if t["measure"] == measure and {t["a"], t["b"]} == {stage, name})
            diff = t["mean_diff"] if t["a"] == name else -t["mean_diff"]
            if t["p_holm"] < alpha:
                (better if diff > 0 else worse).append({"held_out": held, "stage": stage, "diff": diff})
    return {"n": n, "measure": measure, "total": total, "better": better, "worse": worse,
            "folds": list(results["folds"])}
