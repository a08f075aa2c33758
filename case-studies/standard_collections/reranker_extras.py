"""What ``train_rerankers.py`` measures besides the N sweep, one function per question:

- :func:`separability_phase` -- did the trained reader learn to tell a relevant document from a
  non-relevant one, on the collections it trained on and on the one it never saw (AUC per kind
  of negative, and the spread of its scores)?
- :func:`worked_example` -- one question, the first stage's top six, every reader's score (BM25,
  the dense cosine, the trained cross-encoder) and the order the cross-encoder gives them.
- :func:`reader_input_phase` -- the text the reader reads: as indexed (title + abstract) against
  the abstract alone, at N = 20 (collections without titles are skipped, and say so).
- :func:`latency_phase` -- the second reading's cost per question by N and by the tokens read per
  pair, only on a quiet machine: it waits for the one-minute load to fall, reads with one torch
  thread, and writes no timing when the load was above :data:`MAX_LOAD` before or after.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from gabarito.core.methods import trained_reading
from gabarito.core.runs import Run
from gabarito.measure.score import score_runs
from gabarito.measure.timing import MAX_LOAD, QUIET_LOAD, QUIET_WAIT_S, load_average, summarize, time_calls, wait_for_quiet
from gabarito.retrieval.pipeline import SecondReading
from gabarito.retrieval.rerank import CrossEncoderReranker
from gabarito.retrieval.rerank.training import pair_scores, separability
from studies.standard_collections.reranker_findings import untitled

SEPARABILITY_PAIRS = 300
EXAMPLE_CANDIDATES = 6
EXAMPLE_RULE = ("The question whose nDCG@10 the reading of BM25's top 20 changed most (ties by id), "
                "among those whose top six hold both a relevant and a non-relevant document")
INPUT_N = 20
LATENCY_QUESTIONS = 5
LATENCY_NS = (5, 10, 20, 50, 100)
LATENCY_LENGTHS = (64, 128, 256)
LATENCY_N_FOR_LENGTH = 20
LATENCY_REPEAT = 2
LATENCY_THREADS = 1  # one core per question: two threads for a minute would push the load itself past 1


def separability_phase(reader, held_pairs: Sequence, train_pairs: Sequence, seed: int) -> dict:
    """AUC and score spread on a seeded sample of pairs from the held-out collection (built like
    the training pairs) and from the training pairs themselves."""
    out = {}
    for where, pairs in (("held_out", held_pairs), ("training", train_pairs)):
        sample = random.Random(f"{seed}:{where}").sample(list(pairs), min(SEPARABILITY_PAIRS, len(pairs)))
        out[where] = {**separability(sample, pair_scores(reader, sample)), "pairs": len(sample),
                      "collections": sorted({p.query_id.split(":")[0] for p in sample})}
    return out


def worked_example(reader, texts: Mapping[str, str], titles: Mapping[str, str], queries: Mapping[str, str],
                   qrels: Mapping[str, Mapping[str, int]], runs: Mapping[str, Run], per_query: Mapping) -> dict | None:
    """The question whose nDCG@10 the reading of BM25's top 20 changed most (ties by id), among
    those whose top six hold both a relevant and a non-relevant document; its six candidates with
    every reader's score and the order the cross-encoder gives them (ties by doc id)."""
    before, after = per_query["bm25"], per_query[trained_reading("bm25", 20)]
    bm25 = runs["bm25"]

    def mixed(q):
        grades = [qrels.get(q, {}).get(d, 0) for d in bm25.ids(q)[:EXAMPLE_CANDIDATES]]
        return any(g >= 1 for g in grades) and any(g < 1 for g in grades)

    chosen = sorted((q for q in before if q in after and mixed(q)),
                    key=lambda q: (-abs(after[q] - before[q]), int(q) if q.isdigit() else q))
    if not chosen:
        return None
    q = chosen[0]
    head = bm25[q][:EXAMPLE_CANDIDATES]
    ce = [float(x) for x in reader.score(queries[q], [texts[d] for d, _ in head])]
    order = sorted(range(len(head)), key=lambda i: (-ce[i], head[i][0]))
    new_rank = {head[i][0]: r for r, i in enumerate(order, start=1)}
    rows = []
    for rank, ((doc, score), ce_score) in enumerate(zip(head, ce), start=1):
        row = {"doc": doc, "title": titles.get(doc, "")[:120], "text_start": texts[doc][:160],
               "grade": qrels.get(q, {}).get(doc), "bm25_rank": rank, "bm25_score": score,
               "ce_score": ce_score, "ce_rank": new_rank[doc]}
        for stage in ("dense", "rrf"):
            hit = next(((r, s) for r, (d, s) in enumerate(runs[stage].get(q, []), start=1) if d == doc), None)
            row[f"{stage}_rank"], row[f"{stage}_score"] = hit if hit else (None, None)
        rows.append(row)
    return {"query": q, "text": queries[q], "nDCG@10": {"bm25": before[q], trained_reading("bm25", 20): after[q]},
            "candidates": rows, "rule": EXAMPLE_RULE}


def without_title(text: str, title: str) -> str:
    """The document's text without its leading title (unchanged when it does not start with it)."""
    title = " ".join(title.split())
    flat = " ".join(text.split())
    return flat[len(title):].strip() if title and flat.startswith(title) else text


def reader_input_phase(ctx, reader, queries, documents, qrels, firsts: Mapping[str, Run], reread: Mapping[str, Run],
                       measures, tested) -> dict:
    """The reading of the top :data:`INPUT_N` with the text as indexed against the abstract alone."""
    if not any(d.title for d in documents):
        return {"measured": False, "why": "the collection's documents have no title"}
    bodies = {d.id: without_title(d.text, d.title) for d in documents}
    out = {"measured": True, "n": INPUT_N, "changed_docs": sum(bodies[d.id] != d.text for d in documents)}
    for stage, first in firsts.items():
        runs = {trained_reading(stage, INPUT_N): reread[stage],
                untitled(stage, INPUT_N): SecondReading(reader, bodies, n=INPUT_N)(queries, first)}
        scored = score_runs(runs, qrels, measures, tested=tested, resamples=ctx.resamples, seed=ctx.seed, order=None)
        out[stage] = scored.to_dict(per_query=False)
    return out


def latency_phase(folder, queries, texts: Mapping[str, str], first: Run, max_length: int) -> dict:
    """Milliseconds per question to read the top N again (N in :data:`LATENCY_NS`, at
    ``max_length`` tokens) and to read the top :data:`LATENCY_N_FOR_LENGTH` at each length of
    :data:`LATENCY_LENGTHS`, for the first :data:`LATENCY_QUESTIONS` questions (by id)."""
    import torch

    before = wait_for_quiet(QUIET_LOAD, QUIET_WAIT_S)
    record = {"load_before": before, "max_load": MAX_LOAD, "questions": LATENCY_QUESTIONS,
              "repeat": LATENCY_REPEAT, "max_length": max_length, "torch_threads": LATENCY_THREADS}
    if before is None or before[0] > MAX_LOAD:
        return {**record, "valid": False, "why_not_valid": f"one-minute load {before} above {MAX_LOAD} "
                "after waiting: no timing written"}
    text_of = dict(zip(queries.ids, queries.texts))
    qids = sorted(queries.ids, key=lambda q: int(q) if q.isdigit() else q)[:LATENCY_QUESTIONS]

    def timed(reader, n):
        call = lambda q: reader.score(text_of[q], [texts[d] for d in first.ids(q)[:n]])  # noqa: E731
        return summarize(time_calls(call, qids, repeat=LATENCY_REPEAT, warmup=1))

    threads = torch.get_num_threads()
    torch.set_num_threads(LATENCY_THREADS)
    try:
        reader = CrossEncoderReranker(folder, max_length=max_length, batch_size=32)
        by_n = {str(n): timed(reader, n) for n in LATENCY_NS}
        by_length = {str(length): timed(CrossEncoderReranker(folder, max_length=length, batch_size=32),
                                        LATENCY_N_FOR_LENGTH) for length in LATENCY_LENGTHS}
    finally:
        torch.set_num_threads(threads)
    after = load_average()
    if after is None or after[0] > MAX_LOAD:
        return {**record, "load_after": after, "valid": False,
                "why_not_valid": f"one-minute load {after} above {MAX_LOAD} after timing: no timing written"}
    return {**record, "load_after": after, "valid": True, "by_n": by_n,
            "by_length": {"n": LATENCY_N_FOR_LENGTH, "ms": by_length}}
