"""What the reranking chapter states about the cross-encoder trained here (``rerankers.json``,
and ``rerankers_budget.json`` for the reader trained longer): the headline
(:func:`headline`), the tables' rows, and the choices a sentence needs. Paired tests are read
through :class:`gabarito.measure.report.Report`; the thresholds a sentence depends on are stated
once, below. No prose here: the page writes the words.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping

from gabarito.core.methods import Method, trained_reading
from gabarito.core.page_guard import stored
from gabarito.measure.families import Across, paired_across
from gabarito.measure.report import ALPHA, Report
from gabarito.publish.verdicts import span

STAGES = ("bm25", "dense", "rrf")
#: The N the chapter reads the trained reader at (the helpcenter study's headline N).
HEADLINE_N = 20
#: The measure of the classic collections' tables.
MEASURE = "nDCG@10"
#: An AUC against hard negatives at or above this on the held-out collection counts as
#: "separates the candidates that matter"; below it, close to a coin (0.5).
SEPARATES = 0.6


def folds(res: Mapping) -> list[str]:
    return list(res["folds"])


def ns(res: Mapping) -> list[int]:
    return list(res["provenance"]["parameters"]["ns"])


def variant(stage: str, n: int) -> Method:
    """The first stage's top ``n`` read by the trained reader (its key in the results: ``bm25+ce@20``)."""
    return trained_reading(stage, n)


def untitled(stage: str, n: int) -> str:
    """The same reading when the reader reads the documents without their titles (its key in the
    results: the reading's, then `` sem título``)."""
    return f"{variant(stage, n)} sem título"


def test_row(stage_result: Mapping, stage: str, n: int, measure: str) -> dict:
    """The paired test of the reranked top ``n`` against its first stage, oriented as
    reranked minus first stage (gained are questions the second reading improved)."""
    c = Report.from_dict(stage_result).compare(variant(stage, n), stage, measure)
    return {"diff": c.diff, "ci": list(c.ci) if c.ci else None, "p_holm": c.p_holm,
            "gained": c.wins, "lost": c.losses, "same": c.ties, "verdict": c.verdict}


def headline(results: Mapping, measure: str = MEASURE, n: int = HEADLINE_N, alpha: float = ALPHA) -> dict:
    """Over every (held-out collection, first stage): how many the second reading of the top
    ``n`` improved or worsened on ``measure`` with a Holm-corrected p below ``alpha``.

    Returns ``{"n", "measure", "total", "better", "worse", "folds"}`` (better and worse as lists
    of ``{"held_out", "stage", "diff"}``)."""
    better, worse, total = [], [], 0
    for held, fold in results["folds"].items():
        for stage, s in fold["first_stages"].items():
            total += 1
            c = Report.from_dict(s).compare(variant(stage, n), stage, measure)
            if c.p_holm < alpha and c.direction:
                (better if c.direction > 0 else worse).append({"held_out": held, "stage": stage, "diff": c.diff})
    return {"n": n, "measure": measure, "total": total, "better": better, "worse": worse,
            "folds": list(results["folds"])}


def training_rows(res: Mapping) -> list[dict]:
    out = []
    for held, f in res["folds"].items():
        t = f["training"]
        curve = t["loss_curve"]
        out.append({"held_out": held, "train_on": f["train_on"], "pairs": t["pairs"], "steps": t["steps"],
                    "max_steps": t["config"]["max_steps"], "batch": t["config"]["batch_size"],
                    "stopped_by": t["stopped_by"], "seconds": t["train_seconds"],
                    "loss_first": curve[0][1] if curve else None, "loss_last": curve[-1][1] if curve else None,
                    "sha256": t["weights_sha256"], "reused": t.get("reused", False)})
    return out


def headline_rows(res: Mapping, measure: str = MEASURE, n: int = HEADLINE_N) -> list[dict]:
    """Per held-out collection and first stage: before, after reading the top ``n`` again, the
    difference with its interval, Holm p, gained/lost questions, and the ceiling recall@n."""
    out = []
    for held, f in res["folds"].items():
        for stage in STAGES:
            s = f["first_stages"][stage]
            t = test_row(s, stage, n, measure)
            out.append({"held_out": held, "stage": stage, "n_queries": s["n_queries"],
                        "before": s["metrics"][stage][measure], "after": s["metrics"][variant(stage, n)][measure],
                        "ceiling": s["ceiling"][f"R@{n}"] if f"R@{n}" in s["ceiling"] else None, **t})
    return out


def sweep_points(res: Mapping, measure: str = MEASURE) -> list[dict]:
    """One point per (held-out collection, first stage, N): the value after reading the top N
    again, and ``before``, the first stage's own value."""
    pts = []
    for held, f in res["folds"].items():
        for stage in STAGES:
            m = f["first_stages"][stage]["metrics"]
            pts += [{"view": held, "series": stage, "n": n, "value": m[variant(stage, n)][measure],
                     "before": m[stage][measure]} for n in ns(res)]
    return pts


def cost(res: Mapping) -> dict:
    """Cost per (question, text) pair per fold, whether it was measured on a quiet machine, and
    the funnel: milliseconds per question to read the top N again, from the median fold's cost."""
    per = {held: f["cost"] for held, f in res["folds"].items()}
    median = statistics.median(c["ms_per_pair"] for c in per.values())
    return {"per_fold": per, "median_ms_per_pair": median, "all_valid": all(c["valid"] for c in per.values()),
            "busy": [held for held, c in per.items() if not c["valid"]],
            "funnel": [{"n": n, "ms_per_question": n * median} for n in ns(res)]}


def moved_questions(res: Mapping, held: str, stage: str, *, limit: int = 5) -> dict:
    """The questions whose nDCG@10 the second reading of the top 20 raised or lowered most."""
    pq = res["folds"][held]["first_stages"][stage]["per_query_nDCG@10"]
    before, after = pq[stage], pq[variant(stage, 20)]
    deltas = sorted(((after[q] - before[q], q) for q in before), key=lambda x: (x[0], x[1]))
    row = lambda d, q: {"query": q, "before": before[q], "after": after[q], "delta": d}  # noqa: E731
    return {"gained": [row(d, q) for d, q in reversed(deltas) if d > 0][:limit],
            "lost": [row(d, q) for d, q in deltas if d < 0][:limit],
            "unchanged": sum(1 for d, _ in deltas if d == 0)}


def separability_rows(res: Mapping) -> list[dict]:
    """Per fold and where the pairs came from (the held-out collection, the training pairs): how
    well the reader told positives from each kind of negative (AUC), and the spread of its scores."""
    out = []
    for held, f in res["folds"].items():
        for where, s in f["separability"].items():
            sds = [k["sd"] for k in s["by_kind"].values()]
            out.append({"held_out": held, "where": where, "pairs": s["pairs"], "collections": s["collections"],
                        "auc": s["auc"], "max_sd": max(sds)})
    return out


def reader_input_rows(res: Mapping, measure: str = MEASURE) -> list[dict]:
    """Per fold and first stage: the reading of the top N with the text as indexed and with the
    abstract alone, the difference (alone minus as indexed) and its Holm p; folds without titles
    give one row with ``why``."""
    out = []
    for held, f in res["folds"].items():
        ri = f["reader_input"]
        if not ri["measured"]:
            out.append({"held_out": held, "why": ri["why"]})
            continue
        for stage in STAGES:
            base, alone = variant(stage, ri["n"]), untitled(stage, ri["n"])
            report = Report.from_dict(ri[stage])
            c = report.compare(alone, base, measure)
            out.append({"held_out": held, "stage": stage, "n": ri["n"], "as_indexed": report.mean(base, measure),
                        "alone": report.mean(alone, measure), "diff": c.diff, "p_holm": c.p_holm, "why": None})
    return out


def latency_rows(res: Mapping) -> list[dict]:
    """Per fold: the quiet-machine latency record (median ms per question by N and by tokens per
    pair), or why none was written."""
    return [{"held_out": held, **f["latency"]} for held, f in res["folds"].items() if "latency" in f]


# -- the lesson sections: the funnel, the common mistakes, the exercises ---------------------------

def whole_collection(res: Mapping, n: int = HEADLINE_N, extra_sizes: tuple[int, ...] = ()) -> dict:
    """The funnel's arithmetic at the median cost per pair: reading every document of each
    collection again, per question, against reading only the top ``n``; ``extra_sizes`` adds
    collections of a given size that were not measured (``collection`` None), smallest first."""
    c = cost(res)
    ms = c["median_ms_per_pair"]
    sizes = [(name, v["n_docs"]) for name, v in res["provenance"]["corpus"].items()]
    sizes += [(None, s) for s in extra_sizes]
    rows = [{"collection": name, "n_docs": d, "ms_all": d * ms, "ms_top_n": n * ms, "times": d / n}
            for name, d in sorted(sizes, key=lambda x: x[1])]
    measured = [r for r in rows if r["collection"]]
    return {"ms_per_pair": ms, "n": n, "valid": c["all_valid"], "rows": rows,
            "largest": max(measured, key=lambda r: r["n_docs"]),
            "unmeasured": [r for r in rows if not r["collection"]]}


def pairs_in_budget(ms_per_pair: float, budget_ms: float, overhead_ms: float = 0.0) -> int:
    """How many (question, text) pairs fit, read one after another, in ``budget_ms`` once
    ``overhead_ms`` is spent: the largest N a second reading can afford."""
    return max(int((budget_ms - overhead_ms) // ms_per_pair), 0)


def n_extremes(res: Mapping, measure: str = MEASURE) -> list[dict]:
    """Per held-out collection and first stage: the first stage alone, the best N of the sweep
    and its value, and the value at the smallest and at the largest N read again."""
    out = []
    for held, f in res["folds"].items():
        for stage in STAGES:
            m = f["first_stages"][stage]["metrics"]
            vals = {n: m[variant(stage, n)][measure] for n in ns(res)}
            best = max(vals, key=lambda n: (vals[n], -n))
            lo, hi = min(vals), max(vals)
            out.append({"held_out": held, "stage": stage, "alone": m[stage][measure], "best_N": best,
                        "best": vals[best], "smallest_N": lo, "at_smallest": vals[lo], "largest_N": hi,
                        "at_largest": vals[hi]})
    return out


def ceiling_range(res: Mapping, n: int = HEADLINE_N) -> dict:
    """The lowest and highest ceiling (recall@n of the first stage) over collections and stages."""
    rows = [r for r in headline_rows(res, MEASURE, n) if r["ceiling"] is not None]
    lo, hi = min(rows, key=lambda r: r["ceiling"]), max(rows, key=lambda r: r["ceiling"])
    return {"n": n, "lowest": lo, "highest": hi}


# -- more training: the held-out reader trained again with a larger budget -------------------------

def _loss_tail(training: Mapping, last: int = 5) -> float | None:
    """Mean of the last ``last`` logged training losses (one logged value is noisy)."""
    curve = training["loss_curve"][-last:]
    return statistics.fmean(v for _, v in curve) if curve else None


#: Where ``train_budget.py`` stores the paired tests of the reader trained longer against the
#: baseline reader (:func:`budget_tests`, through its ``statistics``).
BUDGET_TESTS = "against_baseline_reader"


def budget_tests(base: Mapping, folds: Mapping, *, seed: int, resamples: int, measure: str = MEASURE,
                 n: int = HEADLINE_N) -> dict:
    """Per fold of ``folds`` (``train_budget.py``'s): the paired test, on each first stage, of its top
    ``n`` read by the reader trained longer against the same run read by the baseline reader
    (``base``, ``rerankers.json``), Holm-corrected over the first stages of the fold (the family
    :class:`gabarito.measure.families.Across`): ``{fold: {"family", "tests": {stage: row}}}``.
    Both must have re-read the same first-stage run (same sha256)."""
    out = {}
    for held, f in folds.items():
        b, pairs = base["folds"][held], {}
        for stage in STAGES:
            sb, sm = b["first_stages"][stage], f["first_stages"][stage]
            if sb["run_sha256"] != sm["run_sha256"]:
                raise ValueError(f"{held}/{stage}: the two readers re-read different first-stage runs")
            key = variant(stage, n)
            pairs[stage] = {"longer": sm[f"per_query_{measure}"][key], "baseline": sb[f"per_query_{measure}"][key]}
        family = Across(f"trained longer against the baseline reader, top {n}, {measure}, {held}", STAGES)
        out[held] = {"family": family.to_dict(),
                     "tests": paired_across(family, pairs, resamples=resamples, seed=seed)}
    return out


def budget_rows(base: Mapping, more: Mapping, measure: str = MEASURE, n: int = HEADLINE_N) -> list[dict]:
    """Per fold of ``more`` (``train_budget.py``) and first stage: the first stage alone, the
    top ``n`` read again by the baseline reader (``rerankers.json``) and by the one trained
    longer, and the paired test of longer minus baseline (randomization p, Holm-corrected over the
    first stages of a fold, questions better / worse): the tests the study stored
    (:data:`BUDGET_TESTS`). Both must have re-read the same first-stage run (same sha256)."""
    tests = stored(more, BUDGET_TESTS)
    out = []
    for held, f in more["folds"].items():
        b = base["folds"][held]
        for stage in STAGES:
            sb, sm = b["first_stages"][stage], f["first_stages"][stage]
            if sb["run_sha256"] != sm["run_sha256"]:
                raise ValueError(f"{held}/{stage}: the two readers re-read different first-stage runs")
            key, t = variant(stage, n), tests[held]["tests"][stage]
            out.append({"held_out": held, "stage": stage, "n": n, "alone": sb["metrics"][stage][measure],
                        "baseline": sb["metrics"][key][measure], "longer": sm["metrics"][key][measure],
                        "diff": t["mean_diff"], "p": t["p_randomization"], "better": t["wins"], "worse": t["losses"],
                        "p_holm": t["p_holm"]})
    return out


def budget_training(base: Mapping, more: Mapping) -> list[dict]:
    """Per fold of ``more``: steps, seconds, the mean of the last logged losses, and the held-out
    AUC against each kind of negative, for the baseline reader and for the one trained longer."""
    out = []
    for held, f in more["folds"].items():
        for which, fold in (("baseline", base["folds"][held]), ("longer", f)):
            t = fold["training"]
            out.append({"held_out": held, "which": which, "steps": t["steps"], "seconds": t["train_seconds"],
                        "stopped_by": t["stopped_by"], "loss_tail": _loss_tail(t),
                        "auc_held_out": fold["separability"]["held_out"]["auc"], "sha256": t["weights_sha256"]})
    return out



# -- the sentences beside the tables ---------------------------------------------------------------

def separability_summary(rows: list[dict], threshold: float = SEPARATES) -> dict:
    """The AUC's range (lowest, highest) per where the pairs came from and kind of negative,
    over every row of :func:`separability_rows`; the largest spread of scores; and whether the
    best AUC against hard negatives on the held-out collections reaches ``threshold``."""
    ranges = {}
    for where in dict.fromkeys(r["where"] for r in rows):
        kinds = dict.fromkeys(k for r in rows if r["where"] == where for k in r["auc"])
        ranges[where] = {k: span(r["auc"][k] for r in rows if r["where"] == where and k in r["auc"]) for k in kinds}
    hard_held_out = max(r["auc"]["assumed non-relevant"] for r in rows if r["where"] == "held_out")
    return {"ranges": ranges, "max_sd": max(r["max_sd"] for r in rows), "hard_held_out": hard_held_out,
            "separates": hard_held_out >= threshold, "threshold": threshold}


def headline_summary(hl: Mapping) -> dict:
    """What the sentence under the headline table says: how many pairs changed significantly,
    and whether some remain where the difference is within chance."""
    changed = len(hl["better"]) + len(hl["worse"])
    return {"changed": changed, "rest": hl["total"] - changed}


def budget_summary(rows: list[dict], training: list[dict], alpha: float = ALPHA) -> dict:
    """The reader trained longer against the baseline: the first stages where the difference is
    significant after Holm (and how many favour the longer training), those where the longer
    reader beats the first stage alone, and the baseline and longer training rows."""
    sig = [r for r in rows if r["p_holm"] < alpha]
    return {"n": len(rows), "significant": sig, "favour_longer": sum(1 for r in sig if r["diff"] > 0),
            "above_alone": [r for r in rows if r["longer"] > r["alone"]],
            "baseline": next(t for t in training if t["which"] == "baseline"),
            "longer": next(t for t in training if t["which"] == "longer")}


def larger_n_worse(res: Mapping, measure: str = MEASURE) -> dict:
    """Over (held-out collection, first stage): how many read at the largest N end below the
    smallest N, and those two N."""
    rows = n_extremes(res, measure)
    return {"n": len(rows), "worse": sum(1 for r in rows if r["at_largest"] < r["at_smallest"]),
            "largest_N": max(ns(res)), "smallest_N": min(ns(res))}


def training_plan(res: Mapping) -> dict:
    """How the readers were trained and read: the held-out collections, how many collections
    each trained on (lowest, highest), the first stages and the range of N read again, and the
    machine's cores."""
    params = res["provenance"]["parameters"]
    return {"folds": folds(res), "train_on": span(len(f["train_on"]) for f in res["folds"].values()),
            "n_stages": len(params["first_stages"]), "ns": span(ns(res)),
            "cores": res["provenance"]["machine"]["cpu_count"]}


def weak_reader(res: Mapping, measure: str = MEASURE, n: int = HEADLINE_N) -> dict:
    """The classic-collection half of the chapter's finding, about the cross-encoder trained here:
    how many (held-out collection, first stage) pairs its second reading of the top ``n`` made
    significantly worse or better (Holm) of ``total``; among the worse, the mildest and the
    largest drop (rows of :func:`headline_rows`, with their intervals); its AUC against hard
    negatives on the collections it did not see (lowest, highest) and whether it separates them;
    and the training steps of its models (lowest, highest)."""
    rows = headline_rows(res, measure, n)
    worse = sorted((r for r in rows if r["verdict"] == "worse"), key=lambda r: r["diff"])
    sep = separability_summary(separability_rows(res))
    return {"n": n, "measure": measure, "total": len(rows), "worse": len(worse),
            "better": sum(r["verdict"] == "better" for r in rows),
            "largest": worse[0] if worse else None, "mildest": worse[-1] if worse else None,
            "auc_hard": sep["ranges"]["held_out"]["assumed non-relevant"], "separates": sep["separates"],
            "steps": span(r["steps"] for r in training_rows(res))}
