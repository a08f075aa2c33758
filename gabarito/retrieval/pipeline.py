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
        return Run({q: second_reading(text_of[q], run.get(q, []), self.texts, self.reader, self.n)
                    for q in queries.ids}, name=run.name)

    def provenance(self) -> dict:
        return {"reader": dict(self.reader.provenance()), "n": self.n}


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
