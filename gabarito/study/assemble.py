"""Assembling a retrieval study's results from runs: metrics, intervals, tests, per-question detail.

A *run* maps each question id to a ranked list of ``(doc_id, score)``. Everything
here is engine-agnostic, so every case study (and the notebooks) share it.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from gabarito.measure import metrics
from gabarito.measure import stats
from gabarito.retrieval.fusion import rrf
from gabarito.inputs.gold import Pair

#: The flagship study's measures, in display order.
MEASURES = ("R@1", "R@3", "R@5", "R@10", "RR@10", "nDCG@5", "nDCG@10")

Run = Mapping[str, Sequence[tuple[str, float]]]


def qrels_from_pairs(pairs: Sequence[Pair]) -> dict[str, dict[str, int]]:
    """One relevant document (grade 1) per question."""
    return {p.id: {p.gold: 1} for p in pairs}


def fuse_runs(runs: Sequence[Run], *, k: int = 60, depth: int) -> dict[str, list[tuple[str, float]]]:
    """RRF of several runs, question by question, each input truncated to ``depth``."""
    qids = list(runs[0])
    return {q: rrf([[d for d, _ in r[q]] for r in runs], k=k, depth=depth) for q in qids}


def score_runs(runs: Mapping[str, Run], qrels: Mapping[str, Mapping[str, int]],
               measures: Sequence[str] = MEASURES, *, n_resamples: int = 10000,
               seed: int = 20260817) -> dict:
    """Mean of each measure per method, bootstrap 95% CIs, and paired tests between methods."""
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    for method, run in runs.items():
        per_query[method] = dict(metrics.evaluate(run, qrels, measures))
    qids = sorted(next(iter(per_query.values()))[measures[0]])
    means = {m: {meas: metrics.mean(per_query[m][meas]) for meas in measures} for m in runs}
    ci = {
        m: {meas: list(stats.bootstrap_ci([per_query[m][meas][q] for q in qids],
                                          n_resamples=n_resamples, seed=seed))
            for meas in measures}
        for m in runs
    }
    tests = []
    for meas in measures:
        rows = stats.compare_methods(
            {m: [per_query[m][meas][q] for q in qids] for m in runs},
            n_resamples=n_resamples, seed=seed,
        )
        for row in rows:
            tests.append({"measure": meas, **row})
    return {"n": len(qids), "metrics": means, "ci": ci, "tests": tests,
            "per_query": per_query}


def gold_ranks(run: Run, pairs: Sequence[Pair], cutoff: int | None = None) -> dict[str, int | None]:
    """Rank of each question's gold document (None when absent or beyond ``cutoff``)."""
    out = {}
    for p in pairs:
        r = metrics.rank_of(run.get(p.id, []), p.gold)
        out[p.id] = r if r is not None and (cutoff is None or r <= cutoff) else None
    return out


def per_question(pairs: Sequence[Pair], runs: Mapping[str, Run], *, cutoff: int = 10,
                 top: int = 3) -> list[dict]:
    """One row per question: for each method the gold's rank (within ``cutoff`` and overall)
    and the top ``top`` documents returned."""
    rows = []
    for p in pairs:
        row = {"id": p.id, "question": p.question, "gold": p.gold}
        for method, run in runs.items():
            ids = metrics.as_ranking(run.get(p.id, []))
            rank = metrics.rank_of(ids, p.gold)
            row[method] = {
                "rank": rank if rank is not None and rank <= cutoff else None,
                "deep_rank": rank,
                "top": ids[:top],
            }
        rows.append(row)
    return rows


def lost_by_fusion(rows: Sequence[Mapping], fused: str, inputs: Sequence[str]) -> list[dict]:
    """Questions whose gold was in some input's top cutoff but not in the fused top cutoff."""
    lost = []
    for r in rows:
        if r[fused]["rank"] is None and any(r[m]["rank"] is not None for m in inputs):
            lost.append({"id": r["id"], "gold": r["gold"], "fused_deep_rank": r[fused]["deep_rank"],
                         **{m: r[m]["rank"] for m in inputs}})
    return lost


def top1_overlap(rows: Sequence[Mapping], a: str, b: str) -> dict[str, int]:
    ranks_a = {r["id"]: r[a]["rank"] for r in rows}
    ranks_b = {r["id"]: r[b]["rank"] for r in rows}
    return metrics.top1_overlap(ranks_a, ranks_b)


def ann_recall(approx: Run, exact: Run, k: int = 10) -> dict:
    """Recall@k of an approximate index against exact search on the same vectors."""
    per_query = {}
    for q, ex in exact.items():
        truth = {d for d, _ in list(ex)[:k]}
        got = {d for d, _ in list(approx.get(q, []))[:k]}
        per_query[q] = len(truth & got) / len(truth) if truth else 0.0
    values = list(per_query.values())
    return {"k": k, "n_queries": len(values), "mean": metrics.mean(values),
            "min": min(values), "perfect": sum(v == 1.0 for v in values)}
