"""One pipeline for every study: first stage(s) -> fusion -> second reading -> cut.

    pipe = Pipeline("rrf", [bm25, dense], fusion=RRF(rrf_k=60), second=SecondReading(reader, texts, n=20),
                    cutoff=10)
    run = pipe.search(queries, depth=100)      # a Run; pipe.stages(...) keeps every stage's run

Words used the same way everywhere:

* ``depth`` -- how far a list goes (what each first stage retrieves and fusion reads);
* ``rrf_k`` -- the RRF constant;
* ``cutoff`` -- what is kept and scored at the end;
* the *second reading* (reranking) reads the first ``n`` candidates again with a costlier
  reader (:mod:`gabarito.retrieval.rerank`) and reorders them; candidates below ``n`` keep
  their order after them.

A pipeline is itself a retriever (``name``, ``search``, ``provenance``), so pipelines compose.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.core.runs import Run
from gabarito.progress import bar as progress_bar
from gabarito.retrieval.fusion import rrf_runs
from gabarito.retrieval.protocol import Queries, Retriever


@dataclass(frozen=True)
class RRF:
    """Reciprocal rank fusion of the first stages' runs, each read to ``depth``."""

    rrf_k: int = 60

    def __call__(self, runs: Sequence[Run], depth: int) -> Run:
        return rrf_runs(runs, rrf_k=self.rrf_k, depth=depth)

    def provenance(self) -> dict:
        return {"fusion": "rrf", "rrf_k": self.rrf_k, "where": "python"}


def second_reading(query: str, ranked: Sequence[tuple[str, float]], texts: Mapping[str, str], reader,
                   n: int) -> list[tuple[str, float]]:
    """Read the first ``n`` candidates again with ``reader``; the rest follow in their order,
    scored below every re-read candidate (so scores stay finite and the order is the one
    :func:`gabarito.retrieval.rerank.rerank` gives)."""
    from gabarito.retrieval.rerank import rerank

    out = rerank(query, [(doc, texts[doc]) for doc, _ in ranked], reader, n=n)
    head = [(doc, float(s)) for doc, s in out if np.isfinite(s)]
    floor = min((s for _, s in head), default=0.0) - 1.0
    tail = [(doc, floor - i * 1e-6) for i, (doc, _) in enumerate(out[len(head):])]
    return head + tail


@dataclass
class SecondReading:
    """The second-reading stage: ``reader`` (see :mod:`gabarito.retrieval.rerank`) over the
    first ``n`` candidates, reading each candidate's text from ``texts``."""

    reader: object
    texts: Mapping[str, str]
    n: int = 20

    def __post_init__(self):
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
            raise GabaritoError(f"the second reading needs n >= 1 candidates, not {self.n!r}")

    def __call__(self, queries: Queries, run: Run) -> Run:
        text_of = dict(zip(queries.ids, queries.texts))
        desc = f"reading ({getattr(self.reader, 'kind', '')})".replace(" ()", "")
        return Run({q: second_reading(text_of[q], run.get(q, []), self.texts, self.reader, self.n)
                    for q in progress_bar(queries.ids, desc=desc, unit="q")}, name=run.name)

    def provenance(self) -> dict:
        return {"reader": dict(self.reader.provenance()), "n": self.n}


READING_FUSIONS = ("replace", "rrf", "convex")


def parse_reading_fusion(spec: str) -> tuple[str, float]:
    """``replace``, ``rrf`` or ``convex:W`` (W, the reader's weight, within [0, 1]) as
    ``(how, weight)`` for :func:`fuse_reading`; a bad spec is one :class:`GabaritoError`."""
    how, _, rest = str(spec).strip().lower().partition(":")
    if how not in READING_FUSIONS or (how == "convex") != bool(rest):
        raise GabaritoError(f"unknown fusion of a second reading {spec!r}: use replace, rrf or convex:W "
                            "(W = the reader's weight, from 0 to 1)")
    try:
        weight = float(rest) if rest else 0.5
    except ValueError:
        raise GabaritoError(f"the reader's weight in {spec!r} is not a number") from None
    if not 0.0 <= weight <= 1.0:
        raise GabaritoError(f"fusion of a second reading {spec!r}: the reader's weight must be within [0, 1]")
    return how, weight


def fuse_reading(first: Run, read: Run, n: int, *, how: str = "rrf", weight: float = 0.5, rrf_k: int = 60) -> Run:
    """The reader's order of the first stage's top ``n`` fused with the first stage's own order;
    the rest of the first stage follows in its order, below every fused candidate.

    ``read`` is the second reading of ``first`` (:class:`SecondReading` with the same ``n``).
    ``how``: ``replace`` keeps the reader's order; ``rrf`` sums ``1 / (rrf_k + rank)`` over the
    two orders; ``convex`` is ``weight * reader + (1 - weight) * first stage`` over scores
    min-max normalized within the top ``n`` (:func:`gabarito.retrieval.fusion_functions.combine_scores`)."""
    from gabarito.retrieval.fusion_functions import combine_scores, weighted_rrf

    if how not in READING_FUSIONS:
        raise GabaritoError(f"unknown fusion of a second reading {how!r} (one of {', '.join(READING_FUSIONS)})")
    if not 0.0 <= weight <= 1.0:
        raise GabaritoError(f"the reader's weight must be within [0, 1], not {weight}")
    heads = {q: first.get(q, [])[:n] for q in first}
    docs = {q: {d for d, _ in h} for q, h in heads.items()}
    reader = {q: [(d, s) for d, s in read.get(q, []) if d in docs[q]][:n] for q in first}
    if how == "replace":
        fused = reader
    elif how == "rrf":
        fused = weighted_rrf([heads, reader], n, rrf_k=rrf_k)
    else:
        fused = combine_scores([reader, heads], n, weights=[weight, 1.0 - weight])
    out = {}
    for q in first:
        head = [(d, float(s)) for d, s in Run({q: fused.get(q, [])})[q]] if fused.get(q) else []
        floor = min((s for _, s in head), default=0.0) - 1.0
        tail = [(d, floor - i * 1e-6) for i, (d, _) in enumerate(first.get(q, [])[n:])]
        out[q] = head + tail
    return Run(out, name=first.name)


Fusion = Callable[[Sequence[Run], int], Run]


@dataclass
class Pipeline:
    """First stage(s) -> fusion (needed with two or more) -> second reading -> cut."""

    name: str
    first: Sequence[Retriever]
    fusion: Fusion | None = None
    second: SecondReading | None = None
    cutoff: int | None = None
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        self.first = list(self.first) if isinstance(self.first, (list, tuple)) else [self.first]
        if not self.first:
            raise GabaritoError(f"pipeline {self.name!r} has no first stage")
        if len(self.first) > 1 and self.fusion is None:
            raise GabaritoError(f"pipeline {self.name!r} has {len(self.first)} first stages and no fusion")

    def stages(self, queries: Queries, depth: int) -> dict[str, Run]:
        """Every stage's run: each first stage by its name, then ``fused``, ``read``, ``cut``
        when those stages exist; the last one is the pipeline's answer."""
        out = {r.name: r.search(queries, depth) for r in self.first}
        run = next(iter(out.values()))
        if len(self.first) > 1:
            run = out["fused"] = self.fusion([out[r.name] for r in self.first], depth)
        if self.second is not None:
            run = out["read"] = self.second(queries, run)
        if self.cutoff is not None:
            out["cut"] = run.cut(self.cutoff)
        return out

    def search(self, queries: Queries, depth: int) -> Run:
        run = list(self.stages(queries, depth).values())[-1]
        run.name = self.name
        return run

    def provenance(self) -> dict:
        out = {"name": self.name, "first": [r.provenance() for r in self.first], **self.info}
        if len(self.first) > 1:
            out["fusion"] = getattr(self.fusion, "provenance", lambda: {"fusion": repr(self.fusion)})()
        if self.second is not None:
            out["second_reading"] = self.second.provenance()
        if self.cutoff is not None:
            out["cutoff"] = self.cutoff
        return out
