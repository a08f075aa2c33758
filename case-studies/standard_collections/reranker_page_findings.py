"""What the reranking chapter states from ``rerankers.json`` beside
:mod:`studies.standard_collections.reranker_findings`: the first stage each short name stands for,
the training loss curves, the worked example of each held-out collection and what the paragraph
under the per-pair cost states. Rows and numbers only; the page writes the words.
"""

from __future__ import annotations

from collections.abc import Mapping

from gabarito.core.methods import Method, leaf
from studies.standard_collections.reranker_findings import HEADLINE_N, MEASURE, cost, variant

#: How much of a worked example's question text and of an untitled candidate's text the page shows.
QUESTION_CHARS, START_CHARS = 300, 80


def stage_methods(res: Mapping) -> dict[str, Method]:
    """The first stage each short name of the tables stands for (``bm25`` → the leaf method
    ``bm25_arcadedb_english``), as method values."""
    return {stage: leaf(key) for stage, key in res["provenance"]["parameters"]["first_stages"].items()}


def loss_curves(res: Mapping) -> dict[str, list]:
    """Per held-out collection, in the folds' order: its model's training loss, step by step."""
    return {held: list(f["training"]["loss_curve"]) for held, f in res["folds"].items()}


def _candidate(r: Mapping) -> dict:
    return {"bm25_rank": r["bm25_rank"], "doc": r["doc"], "title": r["title"] or r["text_start"][:START_CHARS],
            "grade": r["grade"], "bm25_score": r["bm25_score"], "dense_score": r["dense_score"],
            "ce_score": r["ce_score"], "ce_rank": r["ce_rank"]}


def worked_examples(res: Mapping, n: int = HEADLINE_N, measure: str = MEASURE) -> list[dict]:
    """Per held-out collection, in the folds' order: ``held_out`` and its ``example`` (None when no
    question had a relevant and a non-relevant document among BM25's first six): the ``query`` id,
    the start of its ``text``, BM25's ``before`` and the ``after`` of reading its top ``n`` again on
    ``measure``, and the ``candidates`` (BM25 rank, document, title or the start of its text,
    grade, each reader's score and the cross-encoder's new rank)."""
    out = []
    for held, f in res["folds"].items():
        ex = f["worked_example"]
        out.append({"held_out": held, "example": None if ex is None else {
            "query": ex["query"], "text": ex["text"][:QUESTION_CHARS], "before": ex[measure]["bm25"],
            "after": ex[measure][variant("bm25", n)], "candidates": [_candidate(r) for r in ex["candidates"]]}})
    return out


def pair_cost(res: Mapping) -> dict:
    """What the paragraph under the per-pair cost states: the reader's ``max_length`` (tokens per
    pair), the ``median_ms_per_pair`` over the folds and whether every fold was measured on a
    quiet machine (``all_valid``)."""
    c = cost(res)
    return {"max_length": res["provenance"]["parameters"]["max_length"],
            "median_ms_per_pair": c["median_ms_per_pair"], "all_valid": c["all_valid"]}
