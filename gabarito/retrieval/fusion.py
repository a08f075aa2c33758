"""Reciprocal Rank Fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

Each input is a ranked list of document ids, best first. A document's fused
score is the sum, over the lists that contain it, of ``1 / (k + rank)`` with
``rank`` starting at 1. Only document positions are used; the engines' own
scores are ignored, which is the point of RRF (no score calibration needed).

Conventions:

* ``depth`` truncates every input list to its first ``depth`` documents before
  fusing, so a document found only below ``depth`` contributes nothing.
* A document repeated inside one list counts once, at its first (best) rank.
* The output is sorted by descending score, ties broken by ascending doc id,
  so the result does not depend on the order of the input lists.
"""

from __future__ import annotations

from typing import Sequence

from gabarito.errors import GabaritoError

Fused = list[tuple[str, float]]


def rrf(rankings: Sequence[Sequence[str]], k: int = 60, depth: int | None = None) -> Fused:
    """Fuse ranked lists of doc ids; return ``[(doc_id, score), ...]`` best first."""
    if k < 0:
        raise GabaritoError(f"RRF constant k must be >= 0, got {k}")
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
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _ids(ranking: Sequence[str] | Sequence[tuple[str, float]]) -> list[str]:
    """Doc ids of a ranked list given as ids or as ``(doc_id, score)`` pairs (order kept)."""
    return [entry if isinstance(entry, str) else entry[0] for entry in ranking]


def lost_by_fusion(gold: str, rankings: Sequence[Sequence[str]],
                   fused: Sequence[str] | Sequence[tuple[str, float]], cutoff: int) -> bool:
    """True when ``gold`` is in some input list's top ``cutoff`` but not in the fused top ``cutoff``.

    ``fused`` may be the output of :func:`rrf` (pairs) or a plain list of ids.
    """
    if cutoff < 1:
        raise GabaritoError(f"cutoff must be >= 1, got {cutoff}")
    found_by_some = any(gold in list(ranking[:cutoff]) for ranking in rankings)
    return found_by_some and gold not in _ids(fused[:cutoff])
