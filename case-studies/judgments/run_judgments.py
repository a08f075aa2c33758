"""Step 5 of the judgments: the flagship's runs scored under three judgment regimes, and agreement.

    python case-studies/judgments/run_judgments.py      # or: gabarito study judgments

Gold: the graded qrels frozen by ``freeze_qrels.py`` (``judgments.lock.json``). The runs are the
flagship's committed TREC runs (``case-studies/benchmark_rrf/runs``), recorded by sha256 with the
flagship results' own provenance; nothing is searched again. Per gold set:

* agreement of assessors A and B: confusion matrix, Cohen's kappa unweighted and linearly
  weighted, each with a bootstrap interval over pairs;
* three regimes: *single* (the expected concept only), *graded* (grade >= 1 relevant, the grade
  as gain), *full* (grade 2 only); Recall@10, MRR@10 and nDCG@10 with intervals and Holm-corrected
  paired tests, and the order of the methods under each;
* the first results that missed the expected concept but were judged acceptable, per method;
* expected concepts that every assessor graded 0.
"""

from __future__ import annotations

import json
from pathlib import Path

from gabarito.hashing import sha256_file
from gabarito.measure.agreement import GRADES, confusion, kappa_interval
from gabarito.measure.judgments import acceptable_misses
from gabarito.measure.runs import Qrels, Run
from gabarito.measure.score import score_runs

HERE = Path(__file__).resolve().parent
FLAGSHIP = HERE.parent / "benchmark_rrf"
SETS = ("main", "extended", "published", "name_only", "disjoint")
RUNS = {"bm25": "bm25.trec", "vector": "vector.trec", "rrf@10": "rrf_at_10.trec", "rrf@100": "rrf_at_100.trec"}
MEASURES = ("R@10", "RR@10", "nDCG@10")
CUTOFF = 10


def regimes(qrels: Qrels, expected: dict[str, str]) -> dict[str, Qrels]:
    return {"single": Qrels.single(expected), "graded": qrels, "full": qrels.at_least(2)}


def method_order(metrics: dict, measure: str) -> list[str]:
    """Methods from best to worst on ``measure`` (ties by name)."""
    return sorted(metrics, key=lambda m: (-metrics[m][measure], m))


def agreement(pairs: list[dict], ctx) -> dict:
    a, b = [p["a"] for p in pairs], [p["b"] for p in pairs]
    out = {"n_pairs": len(pairs), "grades": list(GRADES), "confusion": confusion(a, b),
           "observed_agreement": sum(x == y for x, y in zip(a, b)) / len(pairs)}
    for name, weights in (("unweighted", None), ("linear", "linear")):
        out[name] = kappa_interval(a, b, weights=weights, resamples=ctx.resamples, seed=ctx.seed)
    return out


def score_set(ctx, name: str, qids: list[str], pairs: list[dict], runs: dict, expected: dict) -> dict:
    qrels = Qrels.from_trec(HERE / "qrels" / f"{name}.txt")
    mine = {q: expected[q] for q in qids}
    per_regime = {}
    for regime, q in regimes(qrels, mine).items():
        scored = score_runs({m: r.cut(CUTOFF) for m, r in runs.items()}, q, MEASURES,
                            seed=ctx.seed, resamples=ctx.resamples)
        per_regime[regime] = {"n": scored["n"], "metrics": scored["metrics"], "ci95": scored["ci"],
                              "tests": scored["tests"],
                              "order": {x: method_order(scored["metrics"], x) for x in MEASURES}}
    sizes = sorted(len([p for p in pairs if p["question"] == q]) for q in qids)
    final = [p["grade"] for p in pairs]
    relevant = {q: sum(1 for p in pairs if p["question"] == q and p["grade"] >= 1) for q in qids}
    return {
        "n_questions": len(qids),
        "pool": {"pairs": len(pairs), "min": sizes[0], "max": sizes[-1], "mean": len(pairs) / len(qids)},
        "final_grades": {str(g): final.count(g) for g in GRADES},
        "relevant_per_question": {"mean": sum(relevant.values()) / len(qids),
                                  "with_more_than_one": sum(v > 1 for v in relevant.values())},
        "agreement": agreement(pairs, ctx),
        "regimes": per_regime,
        "acceptable_misses": {m: acceptable_misses(r, mine, qrels) for m, r in runs.items()},
    }


def run(ctx) -> dict:
    with ctx.phase("load"):
        doc = json.loads((HERE / "judgments.json").read_text(encoding="utf-8"))
        pairs = list(doc["pairs"].values())
        runs = {m: Run.from_trec(FLAGSHIP / "runs" / f, name=m) for m, f in RUNS.items()}
        flagship = json.loads((FLAGSHIP / "results.json").read_text(encoding="utf-8"))
        members, expected, texts = {}, {}, {}
        for s in SETS:
            gold = json.loads((FLAGSHIP / flagship["sets"][s]["gold_file"]).read_text(encoding="utf-8"))
            members[s] = [p["id"] for p in gold["pairs"]]
            expected.update({p["id"]: p["gold"] for p in gold["pairs"]})
            texts.update({p["id"]: p["question"] for p in gold["pairs"]})
    with ctx.phase("score"):
        sets = {}
        for s in SETS:
            wanted = set(members[s])
            sets[s] = score_set(ctx, s, members[s], [p for p in pairs if p["question"] in wanted], runs, expected)
    rejected = [{**doc["pairs"][pid], "pair": pid, "text": texts[doc["pairs"][pid]["question"]],
                 "set": next(s for s in SETS if doc["pairs"][pid]["question"] in members[s])}
                for pid in doc["gold_rejected"]]
    fp = flagship["provenance"]
    return {
        "provenance": ctx.provenance(
            corpus=fp["corpus"], model=fp["model"], engine=fp["engine"],
            parameters={"cutoff": CUTOFF, "measures": list(MEASURES), "methods": list(RUNS),
                        "regimes": {"single": "the expected concept only (grade 1)",
                                    "graded": "every pair of grade >= 1 relevant; nDCG gain = grade",
                                    "full": "only grade 2 relevant"},
                        "kappa_interval": "percentile bootstrap over pairs",
                        "runs": {m: {"file": f"../benchmark_rrf/runs/{f}", "sha256": sha256_file(FLAGSHIP / "runs" / f)}
                                 for m, f in RUNS.items()},
                        "runs_from": {"results": "../benchmark_rrf/results.json", "commit": fp["git"]["commit"],
                                      "date": fp["date"]}}),
        "assessors": doc["assessors"],
        "judged_on": doc["date"],
        "n_pairs": doc["n_pairs"],
        "n_disagreements": doc["n_disagreements"],
        "gold_rejected": rejected,
        "sets": sets,
    }


if __name__ == "__main__":
    from gabarito.study.runner import study_main

    study_main(__file__, run)
