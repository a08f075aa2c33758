"""The identity check: ArcadeDB's RRF (``vector.fuse``) against the pipeline's Python RRF.

Both fuse the same two searches of the same index to the same depth with the same k. For every
question the two fused lists are compared whole (every document, in order) and at the cut that is
scored (top 10). Where they differ, the difference is explained, in this order:

1. ``input_ties`` -- the Python path orders tied first-stage scores by doc id (BM25 even fetches
   past the depth to do so); the server keeps its own order and cuts at the depth. Python RRF over
   the lists *in the server's own order and cut* (the two sub-queries of the native statement,
   sent alone) gives exactly the native list: the fusion arithmetic is the same, the inputs were
   not. ``tie_at_cut`` tells whether a tie straddled the depth (different documents) or only
   reordered tied documents inside a list (same documents, other ranks).
2. ``float32`` -- the same documents, and every swapped pair has Python scores equal to within
   32-bit float resolution (the server adds in float).
3. ``unexplained`` -- anything else; the question and both top-10 lists are kept for the page.

Separately, on every question, the *arithmetic* check: the native list against Python RRF over
the server's own sub-lists (same order, same documents expected) and the largest relative gap
between the two fused scores of a document (float32 on the server: about one part in ten million).
"""

from __future__ import annotations

import re

import numpy as np

from gabarito.retrieval.arcadedb.analyzers import lucene_escape
from gabarito.retrieval.fusion import rrf

FLOAT32_TOLERANCE = 4 * float(np.finfo(np.float32).eps)  # relative, a few units in the last place
CUTOFF = 10


def server_lists(index, text: str, vector, depth: int) -> tuple[list[str], list[str], bool]:
    """The native statement's two sub-queries sent alone, in the server's order and cut; and
    whether the BM25 scores tie across the depth (seen by reading one document past it)."""
    bm25: list[str] = []
    tie_at_cut = False
    if re.search(r"\w", text):  # as NativeFusion: a question without a term has no full-text source
        q = lucene_escape(text)
        bm25 = [r["doc_id"] for r in index.client.query(index.sql_bm25, {"q": q, "k": depth})]  # the native's LIMIT
        rows = index.client.query(index.sql_bm25, {"q": q, "k": depth + 1})  # one past the cut: a tie?
        tie_at_cut = len(rows) > depth and float(rows[depth - 1]["score"]) == float(rows[depth]["score"])
    rows = index.client.query(index.sql_knn, {"v": np.asarray(vector, dtype=np.float32).tolist(), "k": depth})
    return bm25, [r["doc_id"] for r in rows], tie_at_cut


def float32_swaps(python: list[tuple[str, float]], native_ids: list[str]) -> bool:
    """Same documents, and wherever the orders differ the Python scores are float32-equal."""
    score = dict(python)
    if set(score) != set(native_ids):
        return False
    for (a, _), b in zip(python, native_ids):
        if a != b and abs(score[a] - score[b]) > FLOAT32_TOLERANCE * max(abs(score[a]), abs(score[b])):
            return False
    return True


def explain(python, native_ids: list[str], server_fused) -> str:
    """Why one question's native list differs from its Python list (see the module docstring)."""
    if [d for d, _ in server_fused] == native_ids:
        return "input_ties"
    if float32_swaps(list(server_fused), native_ids) or float32_swaps(list(python), native_ids):
        return "float32"
    return "unexplained"


def max_relative_score_gap(python, native) -> float:
    """Largest relative difference of the fused score of a document found in both lists."""
    p = dict(python)
    gaps = [abs(p[d] - s) / max(abs(p[d]), 1e-300) for d, s in native if d in p]
    return max(gaps, default=0.0)


def agreement(run_a, run_b, qids: list[str]) -> dict:
    """How many questions get the same whole list, and the same top 10, from both runs."""
    full = sum(run_a.ids(q) == run_b.ids(q) for q in qids)
    top = sum(run_a.ids(q)[:CUTOFF] == run_b.ids(q)[:CUTOFF] for q in qids)
    return {"n": len(qids), "identical_full": full, "identical_top10": top}


def check(index, queries, vectors, python_run, native_run, depth: int, rrf_k: int, qids: list[str]) -> dict:
    """The identity check on the questions ``qids`` (``vectors``: the query vectors, in the order
    of ``queries``): counts, causes, every difference, and the arithmetic check (the native list
    against Python RRF over the server's own sub-lists, on every question)."""
    text_of = dict(zip(queries.ids, queries.texts))
    vectors = dict(zip(queries.ids, vectors))
    rows, causes = [], {"input_ties": 0, "float32": 0, "unexplained": 0}
    same_full = same_top = same_server = 0
    gap = 0.0
    for q in qids:
        py, nat = python_run.get(q, []), native_run.get(q, [])
        nat_ids = [d for d, _ in nat]
        bm25, dense, tie_at_cut = server_lists(index, text_of[q], vectors[q], depth)
        server_fused = rrf([bm25, dense] if bm25 else [dense], rrf_k=rrf_k, depth=depth)
        same_server += [d for d, _ in server_fused] == nat_ids
        gap = max(gap, max_relative_score_gap(server_fused, nat))
        full = [d for d, _ in py] == nat_ids
        top = [d for d, _ in py[:CUTOFF]] == nat_ids[:CUTOFF]
        same_full += full
        same_top += top
        if full:
            continue
        cause = explain(py, nat_ids, server_fused)
        causes[cause] += 1
        rows.append({"qid": q, "same_top10": top, "cause": cause, "tie_at_cut": tie_at_cut,
                     "python_top10": [d for d, _ in py[:CUTOFF]], "native_top10": nat_ids[:CUTOFF]})
    return {"n": len(qids), "identical_full": same_full, "identical_top10": same_top, "differ": len(rows),
            "causes": causes, "explained": len(rows) - causes["unexplained"],
            "arithmetic": {"identical_to_server_lists": same_server, "max_relative_score_gap": gap},
            "differences": rows}
