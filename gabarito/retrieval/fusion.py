"""Reciprocal Rank Fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

Each input is a ranked list of document ids, best first. A document's fused
score is the sum, over the lists that contain it, of ``1 / (rrf_k + rank)`` with
``rank`` starting at 1 (``rrf_k`` is the RRF constant, 60 in the original paper). Only document positions are used; the engines' own
scores are ignored, which is the point of RRF (no score calibration needed).

Conventions:

* ``depth`` truncates every input list to its first ``depth`` documents before
  fusing, so a document found only below ``depth`` contributes nothing.
* A document repeated inside one list counts once, at its first (best) rank.
* The output is sorted by descending score, ties broken by ascending doc id,
  so the result does not depend on the order of the input lists.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.core.runs import Run, by_score

Fused = list[tuple[str, float]]
RankedLists = Mapping[str, Sequence[tuple[str, float]]]


def rrf_term(rank: int, rrf_k: int, weight: float = 1.0) -> float:
    """What a document at ``rank`` (from 1) adds to its fused score: ``weight / (rrf_k + rank)``."""
    return weight / (rrf_k + rank)


def rrf(rankings: Sequence[Sequence[str]], rrf_k: int = 60, depth: int | None = None) -> Fused:
    """Fuse ranked lists of doc ids; return ``[(doc_id, score), ...]`` best first."""
    if rrf_k < 0:
        raise GabaritoError(f"RRF constant rrf_k must be >= 0, got {rrf_k}")
    if depth is not None and depth < 1:
        raise GabaritoError(f"RRF depth must be >= 1, got {depth}")
    scores: dict[str, float] = {}
    for ranking in rankings:
        if isinstance(ranking, str):
            raise GabaritoError("each ranking must be a sequence of doc ids, not a string")
        seen: set[str] = set()
        for rank, doc in enumerate(ranking[:depth] if depth is not None else ranking, start=1):
            if doc in seen:
                continue
            seen.add(doc)
            scores[doc] = scores.get(doc, 0.0) + rrf_term(rank, rrf_k)
    return by_score(scores.items())


def rrf_runs(runs: Sequence[RankedLists], *, rrf_k: int = 60, depth: int) -> Run:
    """RRF of several runs, query by query (the queries of the first run), each input list
    truncated to ``depth`` before fusing."""
    if not runs:
        raise GabaritoError("RRF needs at least one run")
    return Run({q: rrf([[d for d, _ in r.get(q, [])] for r in runs], rrf_k=rrf_k, depth=depth) for q in runs[0]})
