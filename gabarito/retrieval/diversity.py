"""Diversity of a result list: Maximal Marginal Relevance and two measures of repetition.

* :func:`mmr` -- re-order candidates by Maximal Marginal Relevance (Carbonell & Goldstein, 1998).
* :func:`repeated_text_fraction` -- how much of a result list repeats text shown earlier in it.
* :func:`distinct` -- how many distinct values (e.g. source documents) a result list covers.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence

import numpy as np

from gabarito.errors import GabaritoError

__all__ = ["distinct", "mmr", "repeated_text_fraction", "shingles"]


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def mmr(query_vec: Sequence[float] | np.ndarray, cand_vecs: Sequence[Sequence[float]] | np.ndarray,
        ids: Sequence[Hashable], lam: float, k: int) -> list[Hashable]:
    """The first ``k`` ids picked by Maximal Marginal Relevance (Carbonell & Goldstein, 1998).

    Each step picks, among the candidates not yet picked, the one with the largest::

        lam * sim(q, d) - (1 - lam) * max over picked s of sim(d, s)

    where ``sim`` is cosine similarity (vectors are normalised here; a zero vector has similarity
    0 to everything) and the max over an empty set is 0, so the first pick is the most relevant
    candidate. Equal values go to the candidate that comes first in ``ids``. ``lam = 1`` gives the
    plain relevance order (by cosine to the query, ties in input order); smaller ``lam`` trades
    relevance for novelty. With ``k`` at or above the number of candidates, every id is returned.
    """
    lam = float(lam)
    if not 0.0 <= lam <= 1.0:
        raise GabaritoError(f"lam must be between 0 and 1, got {lam}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise GabaritoError(f"k must be a whole number >= 0, got {k!r}")
    ids = list(ids)
    cands = np.asarray(cand_vecs, dtype=np.float64)
    if not ids:
        return []
    if cands.ndim != 2 or cands.shape[0] != len(ids):
        raise GabaritoError(f"need one vector per id: {len(ids)} ids, vectors of shape {cands.shape}")
    query = np.asarray(query_vec, dtype=np.float64).reshape(-1)
    if query.shape[0] != cands.shape[1]:
        raise GabaritoError(f"query vector has {query.shape[0]} dimensions, candidates {cands.shape[1]}")
    if not (np.all(np.isfinite(cands)) and np.all(np.isfinite(query))):
        raise GabaritoError("a vector holds a NaN or infinite value")
    cands = _unit(cands)
    relevance = cands @ _unit(query.reshape(1, -1))[0]
    redundancy = np.zeros(len(ids))           # max similarity to anything picked so far
    remaining = np.ones(len(ids), dtype=bool)
    picked: list[int] = []
    for _ in range(min(int(k), len(ids))):
        value = lam * relevance - (1.0 - lam) * redundancy
        value[~remaining] = -np.inf
        best = int(np.argmax(value))          # argmax returns the first of equal maxima
        picked.append(best)
        remaining[best] = False
        redundancy = np.maximum(redundancy, cands @ cands[best])
    return [ids[i] for i in picked]


_WORD = re.compile(r"\w+", re.UNICODE)


def shingles(text: str, n: int = 5) -> list[tuple[str, ...]]:
    """The word ``n``-grams of ``text`` in order (words: runs of letters/digits, lower-cased)."""
    words = [w.lower() for w in _WORD.findall(text)]
    return [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]


def repeated_text_fraction(texts: Sequence[str], n: int = 5) -> float:
    """Share of the word ``n``-gram shingles of a result list already seen in an earlier result.

    ``texts`` are the top-k results in rank order. Each text's shingles (word 5-grams by default,
    lower-cased, punctuation ignored, counted with repetition) are checked against the shingles
    of all the results ranked above it; a shingle repeated inside one text does not count. The
    result is repeated shingles / all shingles, 0.0 when there are none (texts shorter than ``n``
    words have no shingle, so they can never count as repeats).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise GabaritoError(f"n must be a whole number >= 1, got {n!r}")
    seen: set[tuple[str, ...]] = set()
    total = repeated = 0
    for text in texts:
        if not isinstance(text, str):
            raise GabaritoError(f"texts must be strings, got {type(text).__name__}")
        grams = shingles(text, n)
        total += len(grams)
        repeated += sum(g in seen for g in grams)
        seen.update(grams)
    return repeated / total if total else 0.0


def distinct(values: Iterable[Hashable]) -> int:
    """How many distinct values there are (e.g. distinct source documents among the top-k)."""
    return len(set(values))
