"""The accuracy phases of the reranking study: first stages alone, the headline (every first stage x
reader at N = HEADLINE_N), the N sweep, what the reader sees (bare vs prefixed chunk), and the
calibration of top scores (answerable vs unanswerable questions).

Every measure comes from :func:`gabarito.measure.metrics.evaluate` (through
:func:`rerank_bench.measures`), every second reading from
:func:`gabarito.retrieval.pipeline.second_reading` (through :func:`rerank_bench.read_again`).
"""

from __future__ import annotations

import numpy as np

from gabarito.measure import metrics
from gabarito.measure.thresholds import choose, chosen_and_validated, separation_auc
from gabarito.retrieval.rerank import gains_and_losses
from gabarito.core.methods import reread
from studies.reranking.methods import PER_TOKEN, stage_scorer
from studies.reranking.rerank_bench import HEADLINE_N, STAGES, Bench, ids_of, measures, ranks, read_again
from studies.reranking.rerank_tokens import describe_counts

STAGE_LABELS = {stage: stage_scorer(stage) for stage in STAGES}
MAX_THROUGH = 0.1
THRESHOLD_TABLE = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)


def first_stage_measures(bench: Bench, sweep_ns) -> dict:
    """Each first stage alone: hit@k and MRR, recall@N for the sweep's N, how much it returns."""
    out = {}
    for stage in STAGES:
        run = bench.runs[stage]
        recall = measures(run, bench.qrels, hits=sweep_ns)
        out[stage] = {**measures(run, bench.qrels, hits=(1, 3, 5, 10, 20)),
                      **{f"recall@{n}": recall[f"hit@{n}"] for n in sweep_ns},
                      "mean_retrieved": float(np.mean([len(run[q.id]) for q in bench.questions])),
                      "min_retrieved": int(min(len(run[q.id]) for q in bench.questions))}
    return out


def moved(bench: Bench, before: dict, after: dict, cutoff: int) -> dict:
    """Questions the second reading brought into the top ``cutoff`` or pushed out of it, with ids."""
    before_ranks, after_ranks = ranks(before, bench.gold), ranks(after, bench.gold)
    out = gains_and_losses(before_ranks, after_ranks, cutoff=cutoff)
    hit = f"hit@{cutoff}"
    was, now = (metrics.evaluate(ids_of(lists), bench.qrels, [hit])[hit] for lists in (before, after))
    out["gained_ids"] = [q for q in before_ranks if not was[q] and now[q]]
    out["lost_ids"] = [q for q in before_ranks if was[q] and not now[q]]
    return out


def headline(bench: Bench) -> tuple[list, dict]:
    """Every first stage x reader at N = HEADLINE_N: before and after, what moved at 1 and 3, and
    each question's gold rank before and after."""
    rows, per_question, qrels = [], {}, bench.qrels
    for stage in STAGES:
        run = bench.runs[stage]
        before = ranks(run, bench.gold)
        ceiling = measures(run, qrels, hits=(HEADLINE_N,))[f"hit@{HEADLINE_N}"]
        per_question[stage] = {}
        for reader in bench.readers:
            read = read_again(bench, stage, reader, HEADLINE_N)
            after = ranks(read, bench.gold)
            row = {"first_stage": stage, "reader": reader, "N": HEADLINE_N, f"recall@{HEADLINE_N}": ceiling,
                   "before": measures(run, qrels), "after": measures(read, qrels)}
            for cutoff in (1, 3):
                row[f"cutoff{cutoff}"] = moved(bench, run, read, cutoff)
            rows.append(row)
            per_question[stage][reader] = {q: [before[q], after[q]] for q in before}
    return rows, per_question


def n_sweep(bench: Bench, ns) -> list[dict]:
    """Every first stage x reader x N: hit@1, hit@3 and MRR after reading the first N again."""
    rows, qrels = [], bench.qrels
    for stage in STAGES:
        run = bench.runs[stage]
        recall = measures(run, qrels, hits=ns)
        for reader in bench.readers:
            for n in ns:
                m = measures(read_again(bench, stage, reader, n), qrels, hits=(1, 3))
                rows.append({"first_stage": stage, "reader": reader, "N": n,
                             "N_effective_mean": float(np.mean([min(n, len(run[q.id])) for q in bench.answerable])),
                             "recall@N": recall[f"hit@{n}"], "hit@1": m["hit@1"], "hit@3": m["hit@3"],
                             "mrr": m["mrr"]})
    return rows


def reader_input(bench: Bench) -> list[dict]:
    """What the reader sees: the bare chunk vs "Document > Section: chunk", at N = HEADLINE_N."""
    rows = []
    for stage in STAGES:
        for reader in bench.readers:
            row = {"first_stage": stage, "reader": reader, "N": HEADLINE_N}
            for label, bare in (("prefixed", False), ("bare", True)):
                m = measures(read_again(bench, stage, reader, HEADLINE_N, bare=bare), bench.qrels, hits=(1,))
                row[label] = {"hit@1": m["hit@1"], "mrr": m["mrr"]}
            rows.append(row)
    return rows


# --- calibration: best score of answerable vs unanswerable questions ------------------------------

def score_rows(bench: Bench, lists: dict) -> list[dict]:
    """Per question: answerable?, the top score, and whether the top result is a gold chunk."""
    first = ranks(lists, bench.gold)
    return [{"id": q.id, "answerable": bool(q.relevant_ids), "top_score": lists[q.id][0][1] if lists[q.id] else None,
             "hit@1": bool(q.relevant_ids) and first[q.id] == 1} for q in bench.questions]


def calibrated(rows: list[dict], seed: int) -> dict:
    """How the top score separates answerable from unanswerable questions, and the thresholds."""
    pos = [r["top_score"] for r in rows if r["answerable"] and r["top_score"] is not None]
    neg = [r["top_score"] for r in rows if not r["answerable"] and r["top_score"] is not None]
    right = [r["top_score"] for r in rows if r["answerable"] and r["hit@1"] and r["top_score"] is not None]
    return {
        "answerable": describe_counts(pos) if pos else None,
        "answerable_right_at_1": describe_counts(right) if right else None,
        "unanswerable": describe_counts(neg) if neg else None,
        "unanswerable_no_result": sum(1 for r in rows if not r["answerable"] and r["top_score"] is None),
        "auc_answerable_vs_unanswerable": separation_auc(pos, neg) if pos and neg else None,
        "chosen_and_validated": chosen_and_validated(rows, seed=seed, max_through=MAX_THROUGH),
        "table": [{"max_through": m, **choose(rows, max_through=m)} for m in THRESHOLD_TABLE],
        "per_question": {r["id"]: [r["top_score"], r["hit@1"]] for r in rows},
    }


def calibration(bench: Bench, seed: int) -> dict:
    """Each first stage's top score, and each reader's after reading the better dense stage's top
    HEADLINE_N (MaxSim also per query token: its scores grow with the query's length)."""
    scorers = {STAGE_LABELS[stage]: score_rows(bench, bench.runs[stage]) for stage in STAGES}
    maxsim = bench.readers["maxsim MiniLM"]
    query_tokens = {q.id: len(maxsim.token_vectors([maxsim.query_prefix + q.query])[0]) for q in bench.questions}
    for reader in bench.readers:
        rows = score_rows(bench, read_again(bench, bench.better, reader, HEADLINE_N, bench.questions))
        scorers[reread(reader, bench.better, HEADLINE_N)] = rows
        if reader in PER_TOKEN:
            scorers[reread(PER_TOKEN[reader], bench.better, HEADLINE_N)] = [
                dict(r, top_score=r["top_score"] / max(1, query_tokens[r["id"]])) for r in rows]
    return {label: calibrated(rows, seed) for label, rows in scorers.items()}


