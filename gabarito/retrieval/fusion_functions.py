"""Fusion functions beyond plain RRF, each a stage of the pipeline: ``fusion(runs, depth) -> Run``.

Every function reads each input run to ``depth`` (a document found only below ``depth``
contributes nothing), works query by query over the queries of the first run, and returns a
:class:`~gabarito.core.runs.Run` (ties by doc id). Conventions, stated because libraries differ:

* **Score normalization** (per query, per input list, over the documents of that list):
  ``minmax`` maps the list's scores to [0, 1] (``(s - min) / (max - min)``; a list whose scores
  are all equal maps to 1); ``zscore`` is ``(s - mean) / sd`` (population sd; sd 0 gives 0);
  ``dbsf`` (distribution-based score fusion, as in Qdrant and ArcadeDB) maps
  ``[mean - 3 sd, mean + 3 sd]`` to [0, 1] and clips outside it (sd 0 gives 0.5).
* **A document missing from a list** contributes 0 from that list (after normalization), for
  every score-based function; CombMNZ then multiplies by the number of lists that hold it.
* ``Linear(weight)`` is the convex combination ``weight * a + (1 - weight) * b`` of two lists'
  normalized scores (Bruch, Gai and Ingber, ACM TOIS 2023); ``weights`` generalizes it to n.
* ``WeightedRRF(rrf_k, weights)`` is ``sum_i w_i / (rrf_k + rank_i)``; with equal weights of 1
  it is :func:`gabarito.retrieval.fusion.rrf` exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from gabarito.errors import GabaritoError
from gabarito.core.runs import Run
from gabarito.retrieval.fusion import rrf_term

Pairs = Sequence[tuple[str, float]]
NORMALIZATIONS = ("minmax", "zscore", "dbsf", "none")


def normalize(pairs: Pairs, method: str) -> dict[str, float]:
    """``{doc: normalized score}`` of one ranked list (see the module docstring)."""
    if method not in NORMALIZATIONS:
        raise GabaritoError(f"unknown normalization {method!r}; valid: {', '.join(NORMALIZATIONS)}")
    scores = {d: float(s) for d, s in pairs}
    if not scores or method == "none":
        return scores
    values = list(scores.values())
    if method == "minmax":
        low, high = min(values), max(values)
        return {d: (s - low) / (high - low) if high > low else 1.0 for d, s in scores.items()}
    mean = math.fsum(values) / len(values)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    if method == "zscore":
        return {d: (s - mean) / sd if sd > 0 else 0.0 for d, s in scores.items()}
    if sd == 0:
        return {d: 0.5 for d in scores}
    low, high = mean - 3 * sd, mean + 3 * sd
    return {d: min(1.0, max(0.0, (s - low) / (high - low))) for d, s in scores.items()}


def _weights(weights: Sequence[float] | None, n: int) -> list[float]:
    if weights is None:
        return [1.0] * n
    if len(weights) != n:
        raise GabaritoError(f"{len(weights)} fusion weights for {n} input runs")
    if any(w < 0 for w in weights):
        raise GabaritoError(f"fusion weights must be >= 0, not {list(weights)}")
    return [float(w) for w in weights]


def _check(runs: Sequence[Mapping], depth: int) -> None:
    if not runs:
        raise GabaritoError("fusion needs at least one run")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise GabaritoError(f"fusion depth must be a whole number >= 1, not {depth!r}")


def combine_scores(runs: Sequence[Mapping[str, Pairs]], depth: int, *, normalization: str = "minmax",
                   weights: Sequence[float] | None = None, mnz: bool = False) -> Run:
    """Weighted sum of normalized scores (CombSUM; with ``mnz`` CombMNZ), query by query."""
    _check(runs, depth)
    w = _weights(weights, len(runs))
    out = {}
    for q in runs[0]:
        total: dict[str, float] = {}
        hits: dict[str, int] = {}
        for weight, run in zip(w, runs):
            for doc, score in normalize(list(run.get(q, []))[:depth], normalization).items():
                total[doc] = total.get(doc, 0.0) + weight * score
                hits[doc] = hits.get(doc, 0) + 1
        out[q] = [(d, s * hits[d] if mnz else s) for d, s in total.items()]
    return Run(out)


def weighted_rrf(runs: Sequence[Mapping[str, Pairs]], depth: int, *, rrf_k: int = 60,
                 weights: Sequence[float] | None = None) -> Run:
    """``sum_i w_i / (rrf_k + rank_i)`` over the lists holding each document (ranks from 1)."""
    _check(runs, depth)
    if rrf_k < 0:
        raise GabaritoError(f"RRF constant rrf_k must be >= 0, got {rrf_k}")
    w = _weights(weights, len(runs))
    out = {}
    for q in runs[0]:
        total: dict[str, float] = {}
        for weight, run in zip(w, runs):
            for rank, (doc, _) in enumerate(list(run.get(q, []))[:depth], start=1):
                total[doc] = total.get(doc, 0.0) + rrf_term(rank, rrf_k, weight)
        out[q] = list(total.items())
    return Run(out)


@dataclass(frozen=True)
class Linear:
    """Convex combination of two runs' normalized scores: ``weight * first + (1 - weight) * second``."""

    weight: float = 0.5
    normalization: str = "minmax"

    def __post_init__(self):
        if not 0.0 <= self.weight <= 1.0:
            raise GabaritoError(f"linear fusion weight must be in [0, 1], not {self.weight}")

    def __call__(self, runs: Sequence[Run], depth: int) -> Run:
        if len(runs) != 2:
            raise GabaritoError(f"linear fusion combines two runs, not {len(runs)}")
        return combine_scores(runs, depth, normalization=self.normalization,
                              weights=[self.weight, 1.0 - self.weight])

    def provenance(self) -> dict:
        return {"fusion": "linear", "weight": self.weight, "normalization": self.normalization, "where": "python"}


@dataclass(frozen=True)
class CombSUM:
    normalization: str = "minmax"
    mnz: bool = False

    def __call__(self, runs: Sequence[Run], depth: int) -> Run:
        return combine_scores(runs, depth, normalization=self.normalization, mnz=self.mnz)

    def provenance(self) -> dict:
        return {"fusion": "combmnz" if self.mnz else "combsum", "normalization": self.normalization,
                "where": "python"}


@dataclass(frozen=True)
class DBSF:
    """Distribution-based score fusion: sum of the lists' ``dbsf``-normalized scores."""

    weights: tuple[float, ...] | None = None

    def __call__(self, runs: Sequence[Run], depth: int) -> Run:
        return combine_scores(runs, depth, normalization="dbsf", weights=self.weights)

    def provenance(self) -> dict:
        return {"fusion": "dbsf", "weights": list(self.weights) if self.weights else None, "where": "python"}


@dataclass(frozen=True)
class WeightedRRF:
    rrf_k: int = 60
    weights: tuple[float, ...] | None = field(default=None)

    def __call__(self, runs: Sequence[Run], depth: int) -> Run:
        return weighted_rrf(runs, depth, rrf_k=self.rrf_k, weights=self.weights)

    def provenance(self) -> dict:
        return {"fusion": "weighted_rrf", "rrf_k": self.rrf_k,
                "weights": list(self.weights) if self.weights else None, "where": "python"}


def parse_fusion(spec: str):
    """A fusion stage from ``rrf``, ``rrf:K``, ``wrrf:K:W1,W2``, ``linear:W``, ``dbsf``, ``combsum``,
    ``combmnz`` (the ``--fusion`` option of ``gabarito evaluate``)."""
    from gabarito.retrieval.pipeline import RRF

    name, _, arg = (spec or "").strip().lower().partition(":")
    try:
        if name == "rrf":
            return RRF(int(arg) if arg else 60)
        if name == "wrrf":
            k, _, ws = arg.partition(":")
            return WeightedRRF(int(k or 60), tuple(float(x) for x in ws.split(",")) if ws else None)
        if name == "linear":
            return Linear(float(arg) if arg else 0.5)
        if name == "dbsf" and not arg:
            return DBSF()
        if name in ("combsum", "combmnz") and not arg:
            return CombSUM(mnz=name == "combmnz")
    except ValueError:
        pass
    raise GabaritoError(f"unknown fusion {spec!r}; use rrf, rrf:K, wrrf:K:W1,W2, linear:W, dbsf, combsum or combmnz")
