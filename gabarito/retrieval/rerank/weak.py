"""Weak supervision from a collection's own text (MacAvaney et al., SIGIR 2019, "Content-Based
Weak Supervision for Ad-Hoc Re-Ranking"): no judgment is read.

* :func:`split_pseudo_query` -- a document's title (or, without one, its first sentence) becomes a
  pseudo-query; the rest of the document is its positive text;
* :func:`pseudo_queries` -- one per usable document of a collection (a seeded sample when a
  limit is set), with counts of what was skipped and why;
* :func:`false_negatives` -- which candidate negatives a bi-encoder places as close to the
  positive as the positive is to its pseudo-query (they are dropped: a BM25 neighbour of a
  document is often another relevant one);
* :func:`weak_pairs` -- labelled :class:`~gabarito.retrieval.rerank.training.Pair` s: the positive,
  hard negatives drawn from the first stage's ranking for the pseudo-query (the source document
  left out, false negatives filtered) and random negatives.

    found = pseudo_queries(documents, limit=1000, seed=7)
    cands = {p.doc_id: [d for d, _ in bm25.search(p.query, 31)] for p in found["pseudo"]}
    pairs, counts = weak_pairs(found["pseudo"], texts, cands, PairPlan(negatives_per_positive=1,
                               random_negatives_per_positive=1, seed=7), encode=encoder.encode)
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.retrieval.rerank.training import ASSUMED_NEGATIVE, POSITIVE, RANDOM_NEGATIVE, Pair, PairPlan

#: Where a title or first sentence ends: the SMART " . " mark, a run of two or more spaces, or a
#: sentence's final punctuation followed by a space.
_BOUNDARY = re.compile(r"\s\.\s+|\s{2,}|[.?!;]\s+")
QUERY_PREFIX = "pq:"


def _words(text: str) -> int:
    return sum(any(ch.isalnum() for ch in w) for w in text.split())


@dataclass(frozen=True)
class PseudoQuery:
    doc_id: str
    query: str
    positive: str
    source: str  # "title" or "first sentence"


def split_pseudo_query(text: str, title: str = "", *, min_query_words: int = 3, max_query_words: int = 40,
                       min_rest_words: int = 8) -> tuple[str, str, str] | None:
    """``(pseudo-query, rest, source)`` or None when the document has no usable split.

    The pseudo-query ends at the first boundary after ``min_query_words`` words (and, when the
    document has a ``title`` its text starts with, not before the title's last word); it may not
    exceed ``max_query_words``; the rest needs ``min_rest_words`` words."""
    if not text or not text.strip():
        return None
    text = re.sub(r"(?<!\s)\n(?!\s)", " ", text.strip())  # a line break inside a sentence is a space
    title = " ".join((title or "").split())
    titled = bool(title) and " ".join(text.split()).startswith(title)
    need = max(min_query_words, _words(title) if titled else 0)
    for m in _BOUNDARY.finditer(text):
        query = " ".join(text[:m.start() + (1 if text[m.start()] in "?!" else 0)].split())
        words = _words(query)
        if words < need:
            continue
        if words > max_query_words:
            return None
        rest = " ".join(text[m.end():].split())
        if rest.startswith(query):  # Cranfield's abstracts repeat their title: not a positive to learn
            rest = rest[len(query):].lstrip(" .;")
        if len(rest.split()) < min_rest_words:
            return None
        return query, rest, "title" if titled else "first sentence"
    return None


def pseudo_queries(documents: Sequence, *, limit: int | None = None, seed: int = 0, **split) -> dict:
    """``{"pseudo": [PseudoQuery], "counts": {...}}`` for documents with ``id``, ``text`` and
    ``title``; with ``limit``, a seeded sample of that many (kept in document order)."""
    found, skipped = [], 0
    for d in documents:
        got = split_pseudo_query(d.text, getattr(d, "title", ""), **split)
        if got is None:
            skipped += 1
            continue
        found.append(PseudoQuery(str(d.id), *got))
    usable = len(found)
    if limit is not None and usable > limit:
        keep = set(random.Random(f"{seed}:pseudo").sample(range(usable), limit))
        found = [p for i, p in enumerate(found) if i in keep]
    by_source = {s: sum(p.source == s for p in found) for s in ("title", "first sentence")}
    return {"pseudo": found, "counts": {"documents": len(documents), "usable": usable, "skipped": skipped,
                                        "kept": len(found), **by_source}}


def _unit(matrix) -> np.ndarray:
    m = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


def false_negatives(query: np.ndarray, positive: np.ndarray, negatives: np.ndarray) -> np.ndarray:
    """A boolean per negative: True when its cosine to the positive is at least the positive's
    cosine to the query (the bi-encoder cannot tell it from another answer)."""
    q, p = _unit(np.atleast_2d(query))[0], _unit(np.atleast_2d(positive))[0]
    if len(negatives) == 0:
        return np.zeros(0, dtype=bool)
    n = _unit(negatives)
    return n @ p >= float(q @ p)


def _draw(rng: random.Random, pool: list[str], k: int) -> list[str]:
    return rng.sample(pool, min(len(pool), k))


def weak_pairs(pseudo: Sequence[PseudoQuery], documents: Mapping[str, str], candidates: Mapping[str, Sequence[str]],
               plan: PairPlan, *, encode: Callable[[list[str]], np.ndarray] | None = None,
               prefix: str = "") -> tuple[list[Pair], dict]:
    """Pairs for each pseudo-query and counts (pairs of each kind, negatives dropped as false).

    ``candidates[doc_id]`` is the first stage's ranking for that document's pseudo-query; hard
    negatives are drawn from its top ``plan.negative_depth`` (never the source document). With
    ``encode`` (texts -> vectors), twice as many are drawn as needed and false negatives dropped
    (:func:`false_negatives`), in the order drawn. Seeded by ``plan.seed`` and the document id."""
    if not pseudo:
        raise GabaritoError("no pseudo-query to build pairs from")
    doc_ids = sorted(documents, key=str)
    drafts = []
    for p in pseudo:
        rng = random.Random(f"{plan.seed}:{prefix}{p.doc_id}")
        pool = [d for d in list(candidates.get(p.doc_id, []))[:plan.negative_depth] if d != p.doc_id and d in documents]
        want = plan.negatives_per_positive
        drafts.append((p, rng, _draw(rng, pool, 2 * want if encode else want)))
    dropped = 0
    if encode is not None:
        texts = sorted({t for p, _, negs in drafts for t in [p.query, p.positive, *(documents[d] for d in negs)]})
        index = {t: i for i, t in enumerate(texts)}
        vectors = np.asarray(encode(texts))
        kept = []
        for p, rng, negs in drafts:
            flags = false_negatives(vectors[index[p.query]], vectors[index[p.positive]],
                                    vectors[[index[documents[d]] for d in negs]] if negs else np.zeros((0, 1)))
            dropped += int(flags.sum())
            kept.append((p, rng, [d for d, f in zip(negs, flags) if not f][:plan.negatives_per_positive]))
        drafts = kept
    pairs: list[Pair] = []
    for p, rng, negs in drafts:
        qid = prefix + QUERY_PREFIX + p.doc_id
        taken = set(candidates.get(p.doc_id, [])[:plan.negative_depth]) | {p.doc_id}
        easy = _draw(rng, [d for d in doc_ids if d not in taken], plan.random_negatives_per_positive)
        pairs.append(Pair(qid, prefix + p.doc_id, p.query, p.positive, 1.0, POSITIVE))
        pairs += [Pair(qid, prefix + d, p.query, documents[d], 0.0, ASSUMED_NEGATIVE) for d in negs]
        pairs += [Pair(qid, prefix + d, p.query, documents[d], 0.0, RANDOM_NEGATIVE) for d in easy]
    counts = {"pseudo_queries": len(pseudo), "positives": sum(p.kind == POSITIVE for p in pairs),
              "hard_negatives": sum(p.kind == ASSUMED_NEGATIVE for p in pairs),
              "random_negatives": sum(p.kind == RANDOM_NEGATIVE for p in pairs),
              "dropped_as_false_negatives": dropped, "filtered": encode is not None}
    return pairs, counts
