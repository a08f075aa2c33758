"""The training recipe of a reader held out from one collection, and its validation.

A :class:`Source` is one collection as training reads it: its questions, texts, judgments, the
first stage's ranking per question (where the hard negatives come from) and rows to skip. For a
held-out collection, :func:`pseudo_source` keeps only its texts: its titles (or first sentences)
become pseudo-queries for their own documents; its judgments are never read.

* :func:`split_validation` -- a seeded share of a training collection's judged questions kept
  aside for validation; training never sees them;
* :class:`EpochGroups` -- ``groups(epoch)``: per positive, a group ``[positive, one hard negative
  from the first stage's top 30, one random document]`` for every judged positive of the
  training questions and for every pseudo-query; the negatives are drawn again each epoch;

The checkpoint's validation, which measures, is :func:`gabarito.measure.reader_validation.validation`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gabarito.errors import GabaritoError
from gabarito.retrieval.rerank.training import POSITIVE, Pair, PairPlan, build_pairs
from gabarito.retrieval.rerank.weak import PseudoQuery, weak_pairs

#: How deep in the first stage's ranking a hard negative is drawn from (every recipe here).
NEGATIVE_DEPTH = 30
#: The bi-encoder that filters false negatives from weakly supervised pairs.
FILTER_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def judged_plan(seed: int) -> PairPlan:
    """Judged pairs: up to 8 positives per question, one hard and one random negative per positive."""
    return PairPlan(positives=8, negatives_per_positive=1, negative_depth=NEGATIVE_DEPTH,
                    random_negatives_per_positive=1, seed=seed)


def weak_plan(seed: int) -> PairPlan:
    """Pseudo-query pairs: the one positive, one hard and one random negative."""
    return PairPlan(positives=1, negatives_per_positive=1, negative_depth=NEGATIVE_DEPTH,
                    random_negatives_per_positive=1, seed=seed)


def per_positive(seed: int, *, positives: int = 1_000_000) -> PairPlan:
    """Every judged positive (up to ``positives``) with one hard and one random negative each."""
    return PairPlan(positives=positives, negatives_per_positive=1, negative_depth=NEGATIVE_DEPTH,
                    random_negatives_per_positive=1, seed=seed)


@dataclass(frozen=True)
class Source:
    """One training collection: questions, texts, judgments, first-stage rankings, rows to skip."""

    name: str
    queries: Mapping[str, str]
    texts: Mapping[str, str]
    qrels: Mapping[str, Mapping[str, int]]
    candidates: Mapping[str, Sequence[str]]
    exclude: Mapping[str, set] = field(default_factory=dict)

    def only(self, qids: set[str]) -> "Source":
        """The same collection restricted to the questions ``qids``."""
        return Source(self.name, {q: t for q, t in self.queries.items() if q in qids}, self.texts,
                      {q: j for q, j in self.qrels.items() if q in qids}, self.candidates,
                      {q: s for q, s in self.exclude.items() if q in qids})


@dataclass(frozen=True)
class PseudoSource:
    """A held-out collection as training may read it: pseudo-queries over its own texts."""

    name: str
    pseudo: Sequence[PseudoQuery]
    texts: Mapping[str, str]
    candidates: Mapping[str, Sequence[str]]  # per source document: the first stage's ranking for its pseudo-query


def answerable(source: Source) -> list[str]:
    """The questions with at least one relevant document (in id order)."""
    return sorted(q for q, judged in source.qrels.items() if q in source.queries and any(g >= 1 for g in judged.values()))


def split_validation(source: Source, share: float, seed: int, *, minimum: int = 3) -> tuple[Source, Source]:
    """``(training, validation)``: a seeded ``share`` of the answerable questions (at least
    ``minimum``) kept for validation; the two never share a question."""
    if not 0.0 < share < 1.0:
        raise GabaritoError(f"the validation share must be within (0, 1), not {share}")
    qids = answerable(source)
    k = min(len(qids) - 1, max(minimum, round(share * len(qids))))
    if k < 1:
        raise GabaritoError(f"{source.name}: too few answerable questions to keep some for validation")
    held = set(random.Random(f"{seed}:{source.name}:validation").sample(qids, k))
    return source.only(set(qids) - held), source.only(held)


def _groups(pairs: Sequence[Pair]) -> list[list[Pair]]:
    """Pairs of one question, in ``build_pairs``/``weak_pairs`` order (positives, hard, random),
    regrouped per positive: the i-th positive with the i-th hard and the i-th random negative."""
    by_query: dict[str, tuple[list, list, list]] = {}
    for p in pairs:
        slot = 0 if p.kind == POSITIVE else 2 if p.kind.startswith("random") else 1
        by_query.setdefault(p.query_id, ([], [], []))[slot].append(p)
    out = []
    for pos, hard, easy in by_query.values():
        for i, p in enumerate(pos):
            out.append([p, *hard[i:i + 1], *easy[i:i + 1]])
    return out


class EpochGroups:
    """``groups(epoch)`` for the trainer; ``counts(epoch)`` says how many of each came from where."""

    def __init__(self, judged: Sequence[Source], pseudo: Sequence[PseudoSource], seed: int):
        if not judged and not pseudo:
            raise GabaritoError("nothing to train on")
        self.judged, self.pseudo, self.seed = list(judged), list(pseudo), seed

    def _judged(self, s: Source, epoch: int) -> list[list[Pair]]:
        pairs = build_pairs(s.queries, s.texts, s.qrels, s.candidates, per_positive(self.seed + epoch),
                            exclude=s.exclude, prefix=f"{s.name}:")
        return _groups(pairs)

    def _pseudo(self, s: PseudoSource, epoch: int) -> list[list[Pair]]:
        pairs, _ = weak_pairs(s.pseudo, s.texts, s.candidates, weak_plan(self.seed + epoch), prefix=f"{s.name}:")
        return _groups(pairs)

    def __call__(self, epoch: int) -> list[list[Pair]]:
        out = []
        for s in self.judged:
            out += self._judged(s, epoch)
        for s in self.pseudo:
            out += self._pseudo(s, epoch)
        return out

    def counts(self, epoch: int = 0) -> dict:
        per = {s.name: sum(map(len, self._judged(s, epoch))) for s in self.judged}
        per.update({f"{s.name} (pseudo-queries)": sum(map(len, self._pseudo(s, epoch))) for s in self.pseudo})
        return {"pairs_per_epoch": sum(per.values()), "by_source": per}
