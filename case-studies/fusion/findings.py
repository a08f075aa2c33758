"""What the fusion page (notebooks/fusao.ipynb) states, from ``results.json``; numbers, keys and
verdicts, no sentences.

The page asks: does ArcadeDB's own RRF give the same lists (:func:`identity_totals`,
:func:`identity_rows`, :func:`unexplained`); does any fusion beat RRF with k = 60, where, by how
much, significantly (:func:`against_baseline`, :func:`comparison_rows`, :func:`verdicts`); how much
k matters (:func:`k_rows`, :func:`k_summary`); which weights the cross-fitting chose
(:func:`tuning_rows`); what one round trip costs against two (:func:`latency_rows`,
:func:`latency_summary`, :func:`round_trips`). :func:`headline` and :func:`essentials` are what the page's first screen
("O essencial") states; :func:`set_rows`, :func:`bars`, :func:`k_bars`, :func:`other_verdicts`,
:func:`first_stages` and :func:`run_limit` are what its tables, charts and sentences read.

Each set's score block is read as a :class:`~gabarito.measure.report.Report`; a fusion is
"above" or "below" the baseline when its Holm-corrected test against it says so at the report's
alpha (:attr:`~gabarito.measure.report.Comparison.verdict`).
"""

from __future__ import annotations

from typing import Iterator, Mapping

from gabarito.measure.report import Comparison, Report
from studies.fusion.methods import rrf_with

#: A relative score gap below this is "below one millionth" (rounding of 32-bit sums).
GAP_FLOOR = 1e-6
#: The two searches every fusion reads (each set stores their means, untested).
SINGLES = ("bm25", "dense")
#: The fusions whose weight is tuned (cross-fitted) on half of the questions.
WEIGHTED = ("linear_cv", "wrrf_cv")


def sets(results: Mapping) -> Iterator[tuple[str, str, Mapping]]:
    """``(corpus, set, result)`` in the study's order (smallest corpus first)."""
    for corpus in results["provenance"]["parameters"]["corpora"]:
        for key, res in results["corpora"][corpus]["sets"].items():
            yield corpus, key, res


def set_keys(results: Mapping) -> list[tuple[str, str]]:
    """``(corpus, set)`` of every judged set, in the study's order."""
    return [(c, k) for c, k, _ in sets(results)]


def baseline(results: Mapping) -> str:
    return results["provenance"]["parameters"]["baseline"]


def baseline_k(results: Mapping) -> int:
    """The k of the baseline RRF (the one every test is against)."""
    ks = results["provenance"]["parameters"]["rrf_ks"]
    return next(k for k in ks if rrf_with(k) == baseline(results))


def run_limit(results: Mapping) -> int | None:
    """How many questions of each set a development run kept (the page warns of a partial run), or
    None for a full run."""
    return results["provenance"]["parameters"]["limit"]


def first_stages(results: Mapping) -> list[str]:
    """The names of the searches every fusion reads (the first stages each corpus records, in order,
    each once): the page counts the engines whose scores RRF need not calibrate."""
    names = [s["name"] for c in results["provenance"]["parameters"]["corpora"]
             for s in results["corpora"][c]["retrievers"]["first_stages"]]
    return list(dict.fromkeys(names))


def set_rows(results: Mapping) -> list[dict]:
    """Per judged set, in the study's order: ``corpus``, ``set``, the corpus's documents
    (``n_docs``), the set's questions (``n``) and its frozen gold file (``gold_file``): the page's
    table of judged sets."""
    return [{"corpus": c, "set": k, "n_docs": results["corpora"][c]["record"]["n_docs"], "n": r["n"],
             "gold_file": r["gold_file"]} for c, k, r in sets(results)]


def bars(results: Mapping, methods: list[str], measure: str = "nDCG@10") -> dict[str, dict]:
    """Per method of ``methods`` (in that order): its mean on ``measure`` in each judged set
    (``means``) and its 95% interval (``ci``), both in the study's set order: what a chart of
    grouped bars over the sets draws."""
    rows = [r for _, _, r in sets(results)]
    return {m: {"means": [r["metrics"][m][measure] for r in rows], "ci": [r["ci95"][m][measure] for r in rows]}
            for m in methods}


def k_bars(results: Mapping, measure: str = "nDCG@10") -> list[dict]:
    """Per RRF k of the study, in its order: ``k``, its ``method`` and its :func:`bars` (``means``,
    ``ci``) over the judged sets: the page's chart of RRF with each k."""
    ks = results["provenance"]["parameters"]["rrf_ks"]
    by_method = bars(results, [rrf_with(k) for k in ks], measure)
    return [{"k": k, "method": rrf_with(k), **by_method[rrf_with(k)]} for k in ks]


# -- identity -------------------------------------------------------------------------------------

def identity_rows(results: Mapping) -> list[dict]:
    return [{"corpus": c, "set": k, **{x: r["identity"][x] for x in
             ("n", "identical_full", "identical_top10", "differ", "explained", "causes", "arithmetic")},
             "dbsf": r["dbsf_agreement"]} for c, k, r in sets(results)]


def identity_totals(results: Mapping) -> dict:
    """Sums over every set: questions, identical lists, identical top 10, each cause; the largest
    relative score gap and whether it is below :data:`GAP_FLOOR` (``gap_below_floor``)."""
    rows = identity_rows(results)
    causes = {c: sum(r["causes"][c] for r in rows) for c in rows[0]["causes"]} if rows else {}
    total = {x: sum(r[x] for r in rows) for x in ("n", "identical_full", "identical_top10", "differ", "explained")}
    gap = max((r["arithmetic"]["max_relative_score_gap"] for r in rows), default=0.0)
    return {**total, "causes": causes, "sets": len(rows),
            "tie_at_cut": sum(d["tie_at_cut"] for _, _, r in sets(results) for d in r["identity"]["differences"]),
            "arithmetic_identical": sum(r["arithmetic"]["identical_to_server_lists"] for r in rows),
            "max_relative_score_gap": gap, "gap_below_floor": gap < GAP_FLOOR,
            "all_explained": total["explained"] == total["differ"],
            "dbsf_identical_top10": sum(r["dbsf"]["identical_top10"] for r in rows),
            "dbsf_n": sum(r["dbsf"]["n"] for r in rows)}


def unexplained(results: Mapping) -> list[tuple[str, str, Mapping]]:
    """``(corpus, set, difference)`` of every list difference left without an explanation."""
    return [(c, k, d) for c, k, r in sets(results) for d in r["identity"]["differences"] if d["cause"] == "unexplained"]


# -- against the baseline --------------------------------------------------------------------------

def against_baseline(results: Mapping, result: Mapping, measure: str) -> dict[str, Comparison]:
    """One set's tests on ``measure``, each tested method oriented against the baseline (method
    minus baseline), by method, in stored order."""
    report = Report.from_dict(result)
    return {c.a: c for c in report.comparisons(measure, against=baseline(results))}


def tested(results: Mapping, measure: str) -> list[str]:
    """The methods tested against the baseline (as the first set stores them)."""
    _, _, first = next(sets(results))
    return list(against_baseline(results, first, measure))


def comparison_rows(results: Mapping, measure: str = "nDCG@10") -> list[dict]:
    """Per set: the baseline's mean, the best fusion (highest difference; on a tie the
    alphabetically last name), its difference, interval, Holm p, whether it is significant; the fusions
    significantly above and below the baseline; and every comparison (``tests``)."""
    out = []
    for corpus, key, res in sets(results):
        report = Report.from_dict(res)
        tests = {c.a: c for c in report.comparisons(measure, against=baseline(results))}
        best = max(tests, key=lambda m: (tests[m].diff, m))
        c = tests[best]
        out.append({"corpus": corpus, "set": key, "n": res["n"], "baseline": report.mean(baseline(results), measure),
                    "best": best, "best_value": report.mean(best, measure),
                    "diff": c.diff, "ci": list(c.ci) if c.ci else None, "p_holm": c.p_holm,
                    "significant": c.significant,
                    "above": sorted(m for m, x in tests.items() if x.verdict == "better"),
                    "below": sorted(m for m, x in tests.items() if x.verdict == "worse"), "tests": tests})
    return out


def verdicts(results: Mapping, measure: str = "nDCG@10") -> dict:
    """How many sets have a fusion significantly above (or below) the baseline, and which ones."""
    rows = comparison_rows(results, measure)
    return {"n_sets": len(rows), "better_sets": [r for r in rows if r["above"]],
            "worse_sets": [r for r in rows if r["below"]],
            "best_significant": [r for r in rows if r["significant"] and r["diff"] > 0]}


def other_verdicts(results: Mapping, measure: str = "nDCG@10") -> list[dict]:
    """:func:`verdicts` on each measure of the results but ``measure``, in stored order, each with
    its ``measure``: what the page says of the other measures."""
    return [verdicts(results, m) | {"measure": m} for m in results["measures"] if m != measure]


# -- k ------------------------------------------------------------------------------------------------

def k_rows(results: Mapping, measure: str = "nDCG@10") -> list[dict]:
    """Per set: the measure for each RRF k, the spread (max - min), the k of the highest mean
    (a tie goes to the k nearest the baseline's) and the k's whose difference from the baseline
    is significant after Holm."""
    ks = results["provenance"]["parameters"]["rrf_ks"]
    base, base_k = baseline(results), baseline_k(results)
    out = []
    for corpus, key, res in sets(results):
        report = Report.from_dict(res)
        values = {k: report.mean(rrf_with(k), measure) for k in ks}
        out.append({"corpus": corpus, "set": key, "values": values,
                    "spread": max(values.values()) - min(values.values()),
                    "best_k": max(values, key=lambda k: (values[k], -abs(k - base_k))),
                    "significant": [k for k in ks if rrf_with(k) != base
                                    and report.compare(rrf_with(k), base, measure).significant]})
    return out


def k_summary(results: Mapping, measure: str = "nDCG@10") -> dict:
    """Over the sets: the widest spread (its row), how many sets have the baseline's k best, and
    the rows where some k differs significantly from it."""
    rows = k_rows(results, measure)
    base_k = baseline_k(results)
    return {"n": len(rows), "baseline_k": base_k, "widest": max(rows, key=lambda r: r["spread"]),
            "baseline_best": sum(r["best_k"] == base_k for r in rows),
            "significant": [r for r in rows if r["significant"]]}


# -- weights ------------------------------------------------------------------------------------------

def tuning_rows(results: Mapping, method: str) -> list[dict]:
    """Per set: the weight each fold chose, and the curves (each fold's tuning half, and all questions)."""
    out = []
    for corpus, key, res in sets(results):
        fit = res["tuning"][method]
        out.append({"corpus": corpus, "set": key, "chosen": [f["chosen"] for f in fit["folds"]],
                    "halves": [len(f["tuned_on"]) for f in fit["folds"]],
                    "curves": [f["curve"] for f in fit["folds"]], "curve_all": fit["curve_all"]})
    return out


# -- latency -------------------------------------------------------------------------------------------

def latency_rows(results: Mapping) -> list[dict]:
    """Per timed corpus and depth: medians and p95 of each stage, the ratio, the load, validity."""
    out = []
    for corpus in results["provenance"]["parameters"]["corpora"]:
        lat = results["corpora"][corpus]["latency_ms"]
        for depth, m in (lat or {}).items():
            out.append({"corpus": corpus, "depth": int(depth), **m})
    return out


def latency_summary(results: Mapping) -> dict:
    """The latency rows, the valid ones (the only ones a page shows), the invalid ones (load above
    the study's limit), their peak load, and the row the figure shows (the study's depth, else the deepest of the first corpus)."""
    rows = latency_rows(results)
    params = results["provenance"]["parameters"]
    invalid = [r for r in rows if not r["valid"]]
    shown = next((r for r in rows if r["depth"] == params["depth"]), None)
    if shown is None and rows:
        shown = max(rows, key=lambda x: (x["corpus"] == params["corpora"][0], x["depth"]))
    return {"rows": rows, "valid": [r for r in rows if r["valid"]], "invalid": invalid, "peak_load": max((r["peak_load_1min"] for r in invalid), default=None),
            "max_load": invalid[0]["max_load"] if invalid else None,
            "cpu_count": invalid[0]["cpu_count"] if invalid else None, "figure": shown}


def round_trips() -> dict:
    """Calls to the server per question: ``native`` (ArcadeDB's fusion, one statement) and ``python``
    (one per search the Python path fuses, :data:`studies.fusion.latency.PYTHON_CALLS`, which the
    timed Python path calls): the chapter's heading and its text count them from here."""
    from studies.fusion.latency import NATIVE_CALLS, PYTHON_CALLS

    return {"native": len(NATIVE_CALLS), "python": len(PYTHON_CALLS), "python_calls": list(PYTHON_CALLS)}


def latency_key(row: Mapping, *path: str) -> list[str]:
    """Where a latency row's value sits in the results (``path`` inside the row, e.g.
    ``"ratio_python_over_native", "median"``): the key a page's ledger records."""
    return ["corpora", row["corpus"], "latency_ms", str(row["depth"]), *path]


def ratio_range(results: Mapping) -> list[dict]:
    """The valid latency rows (:func:`latency_summary`) with the lowest and the highest median ratio of
    the Python path over the native fusion, each with its ``key``; empty when no timing passed the
    study's validity rule: then no page shows a ratio."""
    valid = sorted(latency_summary(results)["valid"], key=lambda r: r["ratio_python_over_native"]["median"])
    return [{**r, "key": latency_key(r, "ratio_python_over_native", "median")} for r in (valid[:1] + valid[-1:])]


# -- the first screen ----------------------------------------------------------------------------------

def headline(results: Mapping, measure: str = "nDCG@10") -> dict:
    """What the page's first screen states: ``identity`` (:func:`identity_totals`), ``cutoff``,
    ``measure``, ``n_sets``, ``better``/``worse`` (sets with a fusion significantly above/below
    the baseline), ``baseline_k``, and ``latency``: the first latency row at the study's depth
    (None when not timed) with ``latency_valid`` (every row at that depth within the load limit)."""
    params = results["provenance"]["parameters"]
    v = verdicts(results, measure)
    at_depth = [r for r in latency_rows(results) if r["depth"] == params["depth"]]
    return {"identity": identity_totals(results), "cutoff": params["cutoff"], "measure": measure,
            "n_sets": v["n_sets"], "better": len(v["better_sets"]), "worse": len(v["worse_sets"]),
            "baseline_k": baseline_k(results), "latency": at_depth[0] if at_depth else None,
            "latency_valid": all(r["valid"] for r in at_depth)}


def essentials(results: Mapping, measure: str = "nDCG@10") -> dict:
    """The numbers of "O essencial": ``identity`` (:func:`identity_totals`); ``exceptions``, the
    comparison rows (:func:`comparison_rows`) of the sets where some fusion is significantly above
    the baseline, each with ``singles`` (the means of :data:`SINGLES`), ``best_single`` and
    ``baseline_below_best_single`` and ``best_is_weighted`` (one of :data:`WEIGHTED`); ``others``, the remaining rows, and ``others_top``, the one
    among them with the largest best difference (None when there is none); ``k_steady``, the
    sets where no k differs significantly from the baseline's, and ``k_steady_spread``, the
    widest spread among them (None when there is none); ``n_tested``, how many fusions are tested;
    ``cutoff``, the depth every fusion is scored at; ``other_ks``, the study's RRF k's but the baseline's."""
    rows = comparison_rows(results, measure)
    by_set = {(c, k): r for c, k, r in sets(results)}
    exceptions = []
    for row in (r for r in rows if r["above"]):
        singles = {m: by_set[row["corpus"], row["set"]]["metrics"][m][measure] for m in SINGLES}
        best_single = max(singles, key=lambda m: (singles[m], m))
        exceptions.append({**row, "singles": singles, "best_single": best_single,
                           "baseline_below_best_single": row["baseline"] < singles[best_single],
                           "best_is_weighted": row["best"] in WEIGHTED})
    others = [r for r in rows if not r["above"]]
    steady = [r for r in k_rows(results, measure) if not r["significant"]]
    params = results["provenance"]["parameters"]
    return {"identity": identity_totals(results), "measure": measure, "n_sets": len(rows),
            "baseline_k": baseline_k(results), "n_tested": len(tested(results, measure)),
            "cutoff": params["cutoff"], "other_ks": [k for k in params["rrf_ks"] if k != baseline_k(results)],
            "exceptions": exceptions, "others": others,
            "others_top": max(others, key=lambda r: r["diff"]) if others else None,
            "k_steady": steady, "k_steady_spread": max((r["spread"] for r in steady), default=None)}
