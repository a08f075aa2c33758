"""How deep an evaluation run searches, and the one depth every list is cut to before scoring.

A run searches chunks, but its measures count documents: a list of 50 chunks can hold fewer than
50 documents once the chunks of a document are merged (:func:`gabarito.inputs.segment.collapse_to_documents`).
So the rule is about documents:

* :func:`search_to_depth` searches every question at one chunk depth, and doubles it (searching
  every question again, so that all questions of the run share one search) until each question's
  list holds ``depth`` documents or the search cannot give more (every chunk was asked for, or a
  single first stage returned fewer chunks than asked: BM25 finds only chunks that share a word);
* :func:`cut_chunks` cuts each list after its ``depth``-th document, for every method alike
  (BM25, dense, hybrid fusion, a second reading), so that a measure never reads a deeper list for
  one method than for another;
* :func:`ties` counts the questions whose kept documents hold equal scores (to the six
  decimals ``run.trec`` keeps): their order among them is the tie rule's (document id), not the
  search's, whether the scores are cosines or RRF sums.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from gabarito.core.runs import Run
from gabarito.inputs.segment import Chunk

Search = Callable[[int], Mapping[str, Sequence[tuple[str, float]]]]


def documents_in(pairs: Sequence[tuple[str, float]], chunks_by_id: Mapping[str, Chunk]) -> int:
    """How many distinct documents a ranked chunk list holds."""
    return len({chunks_by_id[chunk_id].doc_id for chunk_id, _ in pairs})


def search_to_depth(search: Search, depth: int, start: int, n_chunks: int, chunks_by_id: Mapping[str, Chunk], *,
                    single_stage: bool) -> tuple[Mapping[str, Sequence[tuple[str, float]]], int]:
    """``(run, chunk depth searched)``: ``search(chunk_depth)`` from ``start`` chunks, doubled
    until every list holds ``depth`` documents or is exhausted (see the module docstring).
    ``single_stage``: one first stage (not a fusion), whose shorter list means nothing is left."""
    chunk_depth = max(1, min(int(start), n_chunks))
    while True:
        run = search(chunk_depth)
        if chunk_depth >= n_chunks:
            return run, chunk_depth
        short = [qid for qid, pairs in run.items() if documents_in(pairs, chunks_by_id) < depth
                 and not (single_stage and len(pairs) < chunk_depth)]
        if not short:
            return run, chunk_depth
        chunk_depth = min(n_chunks, chunk_depth * 2)


def cut_chunks(pairs: Sequence[tuple[str, float]], chunks_by_id: Mapping[str, Chunk],
               depth: int) -> list[tuple[str, float]]:
    """The chunk list up to (not including) the chunk that would bring a ``depth + 1``-th document:
    collapsed, it is the first ``depth`` documents, each at the rank and score of its best chunk."""
    seen: set[str] = set()
    out = []
    for chunk_id, score in pairs:
        doc = chunks_by_id[chunk_id].doc_id
        if doc not in seen:
            if len(seen) == depth:
                break
            seen.add(doc)
        out.append((chunk_id, score))
    return out


def cut_run(run: Mapping[str, Sequence[tuple[str, float]]], chunks_by_id: Mapping[str, Chunk],
            depth: int) -> dict[str, list[tuple[str, float]]]:
    """:func:`cut_chunks` of every question's list."""
    return {qid: cut_chunks(pairs, chunks_by_id, depth) for qid, pairs in run.items()}


def ties(ranked: Run) -> dict:
    """``{"questions", "first_rank"}``: how many questions' document lists hold two documents with
    equal scores to six decimals, and the best rank at which such a tie starts (None: no tie), so
    that a measure whose cutoff reaches it can be flagged."""
    questions, first = 0, None
    for pairs in ranked.values():
        scores = [f"{score:.6f}" for _doc, score in pairs]
        at = next((i + 1 for i in range(len(scores) - 1) if scores[i] in scores[i + 1:]), None)
        if at is not None:
            questions += 1
            first = at if first is None else min(first, at)
    return {"questions": questions, "first_rank": first}


def list_lengths(lists: Mapping[str, Sequence[str]]) -> dict:
    """``{"shortest", "longest"}`` documents of the lists (0 when there is none)."""
    sizes = [len(x) for x in lists.values()]
    return {"shortest": min(sizes, default=0), "longest": max(sizes, default=0)}
