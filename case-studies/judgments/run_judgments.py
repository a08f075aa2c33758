"""Step 5 of the judgments: the flagship's runs scored under three judgment regimes, and agreement.

    python case-studies/judgments/run_judgments.py      # or: gabarito study judgments

Gold: the graded qrels frozen by ``freeze_qrels.py`` (``judgments.lock.json``). The runs are the
flagship's committed TREC runs (``case-studies/benchmark_rrf/runs``), recorded by sha256 with the
flagship results' own provenance; nothing is searched again. Per gold set:

* agreement of assessors A and B on packets 01-20: confusion matrix, Cohen's kappa unweighted
  and linearly weighted, each with a bootstrap interval over pairs, overall and on the pairs where
  either gave a non-zero grade (the shared zeros left out), and how the adjudicator resolved the
  disagreements (the higher grade, the lower, in between);
* three judgment regimes: *single* (the expected concept only), *graded* (grade >= 1 relevant, the
  grade as gain), *full* (grade 2 only); Recall@10, MRR@10 and nDCG@10 with intervals and
  Holm-corrected paired tests, and the order of the methods under each;
* the graded and full regimes again under three adjudication regimes: the adjudicator's grade
  (the frozen qrels), min(A, B) and max(A, B) on every disagreement;
* the first results that missed the expected concept but were judged acceptable, per method;
* expected concepts that every assessor graded 0.

The qrels hold packet 21's known answers too (the expected concepts no pool held, graded by two
new assessors in isolated folders: ``judgments_known.json``); its A/B agreement, and its decoys'
new grades against their frozen ones, are reported apart (``packet_21``), with how blindness was
enforced in each round (``blindness``).
"""

from __future__ import annotations

import json
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.measure.agreement import GRADES, agreement_summary
from gabarito.measure.judgments import ADJUDICATION_REGIMES, acceptable_misses, graded_qrels, resolutions, under_regime
from gabarito.core.runs import Qrels, Run
from gabarito.measure.score import score_runs
from studies.judgments.methods import RUNS  # the judged runs, by method

HERE = Path(__file__).resolve().parent
FLAGSHIP = HERE.parent / "benchmark_rrf"
SETS = ("main", "extended", "published", "name_only", "disjoint")
MEASURES = ("R@10", "RR@10", "nDCG@10")
CUTOFF = 10


def regimes(qrels: Qrels, expected: dict[str, str]) -> dict[str, Qrels]:
    return {"single": Qrels.single(expected), "graded": qrels, "full": qrels.at_least(2)}


def method_order(metrics: dict, measure: str) -> list[str]:
    """Methods from best to worst on ``measure`` (ties by name)."""
    return sorted(metrics, key=lambda m: (-metrics[m][measure], m))


def agreement(pairs: list[dict], ctx, a: str = "a", b: str = "b") -> dict:
    """:func:`agreement_summary` of two grades of each pair (by default assessors A and B)."""
    return agreement_summary([p[a] for p in pairs], [p[b] for p in pairs], resamples=ctx.resamples, seed=ctx.seed)


def score(ctx, runs: dict, qrels: Qrels, measures: tuple[str, ...] = MEASURES) -> dict:
    scored = score_runs({m: r.cut(CUTOFF) for m, r in runs.items()}, qrels, measures,
                        seed=ctx.seed, resamples=ctx.resamples)
    return {**scored.to_dict(per_query=False), "order": {x: method_order(scored.metrics, x) for x in measures}}


def adjudication_regimes(ctx, runs: dict, qrels: Qrels, qids: list[str], pairs: dict, adjudicated: dict) -> dict:
    """The graded and full regimes with the disagreements resolved by each adjudication regime; the
    ``adjudicated`` one is the frozen qrels (checked) and its scores are those already computed."""
    out = {"adjudicated": adjudicated}
    for regime in ADJUDICATION_REGIMES:
        q = graded_qrels(under_regime(pairs, regime), qids)
        if regime == "adjudicated":
            if q != qrels:
                raise GabaritoError("the frozen qrels are not the adjudicated grades of judgments.json",
                                    path=HERE / "qrels")
            continue
        out[regime] = {"graded": score(ctx, runs, q), "full": score(ctx, runs, q.at_least(2)),
                       "final_grades": {str(g): sum(p["grade"] == g for p in under_regime(pairs, regime).values())
                                        for g in GRADES}}
    return out


def score_set(ctx, name: str, qids: list[str], pairs: dict, runs: dict, expected: dict) -> dict:
    """``pairs``: the set's pairs of packets 01-20 and its known answers of packet 21 (``role``)."""
    qrels = Qrels.from_trec(HERE / "qrels" / f"{name}.txt")
    mine = {q: expected[q] for q in qids}
    per_regime = {regime: score(ctx, runs, q) for regime, q in regimes(qrels, mine).items()}
    first = {pid: p for pid, p in pairs.items() if "role" not in p}
    values = list(pairs.values())
    final = {str(g): sum(p["grade"] == g for p in values) for g in GRADES}
    sizes = sorted(sum(p["question"] == q for p in values) for q in qids)
    relevant = {q: sum(1 for p in values if p["question"] == q and p["grade"] >= 1) for q in qids}
    adjudicated = {"graded": per_regime["graded"], "full": per_regime["full"], "final_grades": final}
    return {
        "n_questions": len(qids),
        "pool": {"pairs": len(values), "min": sizes[0], "max": sizes[-1], "mean": len(values) / len(qids)},
        "known_answers": len(values) - len(first),
        "final_grades": final,
        "relevant_per_question": {"mean": sum(relevant.values()) / len(qids),
                                  "with_more_than_one": sum(v > 1 for v in relevant.values())},
        "agreement": agreement(list(first.values()), ctx),
        "adjudication": resolutions(first),
        "regimes": per_regime,
        "adjudication_regimes": adjudication_regimes(ctx, runs, qrels, qids, pairs, adjudicated),
        "acceptable_misses": {m: acceptable_misses(r, mine, qrels) for m, r in runs.items()},
    }


def packet_21(ctx, known: dict) -> dict:
    """Packet 21: A/B agreement (all pairs, known answers, decoys), the adjudicator's resolutions,
    the known answers both assessors rejected, and the decoys' new grades against their frozen ones."""
    pairs = known["pairs"]
    by_role = {r: [p for p in pairs.values() if p["role"] == r] for r in ("known", "decoy")}
    decoys = by_role["decoy"]
    return {
        "n_pairs": len(pairs), "n_known": len(by_role["known"]), "n_decoys": len(decoys),
        "n_disagreements": known["n_disagreements"],
        "agreement": {"all": agreement(list(pairs.values()), ctx),
                      **{r: agreement(v, ctx) for r, v in by_role.items()}},
        "adjudication": resolutions(pairs),
        "known_rejected_by_both": sum(p["a"] == 0 and p["b"] == 0 for p in by_role["known"]),
        "known_grades": {x: {str(g): sum(p[x] == g for p in by_role["known"]) for g in GRADES} for x in ("a", "b")},
        "decoys_vs_frozen": {"n": len(decoys), "same_final_grade": sum(p["grade"] == p["old"] for p in decoys),
                             "final": agreement(decoys, ctx, "grade", "old"),
                             "a": agreement(decoys, ctx, "a", "old"), "b": agreement(decoys, ctx, "b", "old")},
    }


def load_gold(flagship: dict) -> tuple[dict, dict, dict]:
    members, expected, texts = {}, {}, {}
    for s in SETS:
        gold = json.loads((FLAGSHIP / flagship["sets"][s]["gold_file"]).read_text(encoding="utf-8"))
        members[s] = [p["id"] for p in gold["pairs"]]
        expected.update({p["id"]: p["gold"] for p in gold["pairs"]})
        texts.update({p["id"]: p["question"] for p in gold["pairs"]})
    return members, expected, texts


def load_inputs() -> tuple[dict, dict, dict, dict, dict, dict, dict, dict]:
    """``doc`` (judgments.json), ``known`` (judgments_known.json), the qrels' pairs (packets 01-20
    and packet 21's known answers), the flagship's runs and results, and :func:`load_gold`'s three."""
    doc = json.loads((HERE / "judgments.json").read_text(encoding="utf-8"))
    known = json.loads((HERE / "judgments_known.json").read_text(encoding="utf-8"))
    pairs = {**doc["pairs"], **{pid: p for pid, p in known["pairs"].items() if p["role"] == "known"}}
    runs = {m: Run.from_trec(FLAGSHIP / "runs" / f, name=m) for m, f in RUNS.items()}
    flagship = json.loads((FLAGSHIP / "results.json").read_text(encoding="utf-8"))
    return doc, known, pairs, runs, flagship, *load_gold(flagship)


def runs_record(flagship: dict) -> dict:
    """The flagship's runs this study scores, by file and sha256, and the run they came from."""
    fp = flagship["provenance"]
    return {"runs": {m: {"file": f"../benchmark_rrf/runs/{f}", "sha256": sha256_file(FLAGSHIP / "runs" / f)}
                     for m, f in RUNS.items()},
            "runs_from": {"results": "../benchmark_rrf/results.json", "commit": fp["git"]["commit"],
                          "date": fp["date"]}}


def run(ctx) -> dict:
    with ctx.phase("load"):
        doc, known, pairs, runs, flagship, members, expected, texts = load_inputs()
    with ctx.phase("score"):
        sets = {}
        for s in SETS:
            wanted = set(members[s])
            sets[s] = score_set(ctx, s, members[s], {pid: p for pid, p in pairs.items() if p["question"] in wanted},
                                runs, expected)
        p21 = packet_21(ctx, known)
        overall = agreement(list(doc["pairs"].values()), ctx)
    rejected = [{**pairs[pid], "pair": pid, "packet": packet, "text": texts[pairs[pid]["question"]],
                 "set": next(s for s in SETS if pairs[pid]["question"] in members[s])}
                for packet, ids in (("01-20", doc["gold_rejected"]), ("21", known["gold_rejected"])) for pid in ids]
    fp = flagship["provenance"]
    return {
        "provenance": ctx.provenance(
            corpus=fp["corpus"], model=fp["model"], engine=fp["engine"],
            parameters={"cutoff": CUTOFF, "measures": list(MEASURES), "methods": list(RUNS),
                        "regimes": {"single": "the expected concept only (grade 1)",
                                    "graded": "every pair of grade >= 1 relevant; nDCG gain = grade",
                                    "full": "only grade 2 relevant"},
                        "adjudication_regimes": {"adjudicated": "the adjudicator's grade (the frozen qrels)",
                                                 "min": "the lower of A's and B's grades",
                                                 "max": "the higher of A's and B's grades",
                                                 "expected": "the expected concept keeps 2 unless A and B gave 0, "
                                                             "in every regime"},
                        "agreement_pairs": "each set's pairs of packets 01-20 (assessors A and B of that round); "
                                           "packet 21 apart",
                        "kappa_interval": "percentile bootstrap over pairs",
                        **runs_record(flagship)}),
        "assessors": doc["assessors"],
        "assessors_packet_21": known["assessors"],
        "blindness": known["blindness"],
        "judged_on": doc["date"],
        "judged_on_packet_21": known["date"],
        "n_pairs": doc["n_pairs"],
        "n_disagreements": doc["n_disagreements"],
        "n_known_answers": sum(s["known_answers"] for s in sets.values()),
        "n_expected": len(expected),
        "expected_judged": sum(p["expected"] for p in pairs.values()),
        "agreement": overall,
        "adjudication": resolutions(doc["pairs"]),
        "gold_rejected": rejected,
        "packet_21": p21,
        "sets": sets,
    }


def statistics(results, ctx) -> dict:
    """What the study stores beside its measurements (``--statistics-only`` recomputes it from a
    written file): each method's wrong first places over the gold sets judged acceptable, with the
    share's Wilson interval."""
    from studies.judgments.findings import ACCEPTABLE, compute_acceptable

    return {ACCEPTABLE: compute_acceptable(results)}


if __name__ == "__main__":
    from gabarito.study.runner import study_main

    study_main(__file__, run, statistics=statistics)
