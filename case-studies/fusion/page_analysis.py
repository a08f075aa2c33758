"""What the fusion page (notebooks/fusao.ipynb) derives from ``results.json``; no prose here.

The page asks: does ArcadeDB's own RRF give the same lists (:func:`identity_totals`,
:func:`identity_rows`); does any fusion beat RRF with k = 60, where, by how much, significantly
(:func:`comparison_rows`, :func:`verdicts`); how much k matters (:func:`k_rows`); which weights the
cross-fitting chose (:func:`tuning_rows`); what one round trip costs against three
(:func:`latency_rows`). Every function returns numbers and keys; the page writes the sentences.
"""

from __future__ import annotations

from typing import Iterator, Mapping

ALPHA = 0.05


def sets(results: Mapping) -> Iterator[tuple[str, str, Mapping]]:
    """``(corpus, set, result)`` in the study's order (smallest corpus first)."""
    for corpus in results["provenance"]["parameters"]["corpora"]:
        for key, res in results["corpora"][corpus]["sets"].items():
            yield corpus, key, res


def identity_rows(results: Mapping) -> list[dict]:
    return [{"corpus": c, "set": k, **{x: r["identity"][x] for x in
             ("n", "identical_full", "identical_top10", "differ", "explained", "causes", "arithmetic")},
             "dbsf": r["dbsf_agreement"]} for c, k, r in sets(results)]


def identity_totals(results: Mapping) -> dict:
    """Sums over every set: questions, identical lists, identical top 10, each cause."""
    rows = identity_rows(results)
    causes = {c: sum(r["causes"][c] for r in rows) for c in rows[0]["causes"]} if rows else {}
    total = {x: sum(r[x] for r in rows) for x in ("n", "identical_full", "identical_top10", "differ", "explained")}
    return {**total, "causes": causes, "sets": len(rows),
            "tie_at_cut": sum(d["tie_at_cut"] for _, _, r in sets(results) for d in r["identity"]["differences"]),
            "arithmetic_identical": sum(r["arithmetic"]["identical_to_server_lists"] for r in rows),
            "max_relative_score_gap": max((r["arithmetic"]["max_relative_score_gap"] for r in rows), default=0.0),
            "dbsf_identical_top10": sum(r["dbsf"]["identical_top10"] for r in rows),
            "dbsf_n": sum(r["dbsf"]["n"] for r in rows)}


def tests_of(result: Mapping, measure: str) -> dict[str, Mapping]:
    """The tests of one set and measure, by the method compared with the baseline."""
    return {t["a"]: t for t in result["tests"][measure]}


def comparison_rows(results: Mapping, measure: str = "nDCG@10") -> list[dict]:
    """Per set: the baseline's mean, the best fusion (highest mean among the tested ones), its
    difference, interval, Holm p; and which fusions are significantly above or below the baseline."""
    baseline = results["provenance"]["parameters"]["baseline"]
    out = []
    for corpus, key, res in sets(results):
        tests = tests_of(res, measure)
        best = max(tests, key=lambda m: (tests[m]["mean_diff"], m))
        t = tests[best]
        out.append({"corpus": corpus, "set": key, "n": res["n"], "baseline": res["metrics"][baseline][measure],
                    "best": best, "best_value": res["metrics"][best][measure], "diff": t["mean_diff"],
                    "ci": [t["ci_low"], t["ci_high"]], "p_holm": t["p_holm"], "significant": t["p_holm"] < ALPHA,
                    "above": sorted(m for m, x in tests.items() if x["p_holm"] < ALPHA and x["mean_diff"] > 0),
                    "below": sorted(m for m, x in tests.items() if x["p_holm"] < ALPHA and x["mean_diff"] < 0)})
    return out


def verdicts(results: Mapping, measure: str = "nDCG@10") -> dict:
    """How many sets have a fusion significantly above (or below) the baseline, and which ones."""
    rows = comparison_rows(results, measure)
    return {"n_sets": len(rows), "better_sets": [r for r in rows if r["above"]],
            "worse_sets": [r for r in rows if r["below"]],
            "best_significant": [r for r in rows if r["significant"] and r["diff"] > 0]}


def k_rows(results: Mapping, measure: str = "nDCG@10") -> list[dict]:
    """Per set: the measure for each RRF k, the spread (max - min), and the k's whose difference
    from k = 60 is significant after Holm."""
    ks = results["provenance"]["parameters"]["rrf_ks"]
    baseline = results["provenance"]["parameters"]["baseline"]
    out = []
    for corpus, key, res in sets(results):
        values = {k: res["metrics"][f"rrf_k{k}"][measure] for k in ks}
        tests = tests_of(res, measure)
        spread = max(values.values()) - min(values.values())
        out.append({"corpus": corpus, "set": key, "values": values, "spread": spread,
                    "best_k": max(values, key=lambda k: (values[k], -abs(k - 60))),
                    "significant": [k for k in ks if f"rrf_k{k}" != baseline and tests[f"rrf_k{k}"]["p_holm"] < ALPHA]})
    return out


def tuning_rows(results: Mapping, method: str) -> list[dict]:
    """Per set: the weight each fold chose, and the curves (each fold's tuning half, and all questions)."""
    out = []
    for corpus, key, res in sets(results):
        fit = res["tuning"][method]
        out.append({"corpus": corpus, "set": key, "chosen": [f["chosen"] for f in fit["folds"]],
                    "halves": [len(f["tuned_on"]) for f in fit["folds"]],
                    "curves": [f["curve"] for f in fit["folds"]], "curve_all": fit["curve_all"]})
    return out


def latency_rows(results: Mapping) -> list[dict]:
    """Per timed corpus and depth: medians and p95 of each stage, the ratio, the load, validity."""
    out = []
    for corpus in results["provenance"]["parameters"]["corpora"]:
        lat = results["corpora"][corpus]["latency_ms"]
        for depth, m in (lat or {}).items():
            out.append({"corpus": corpus, "depth": int(depth), **m})
    return out
