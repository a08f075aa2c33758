"""The runs the fusion study compares, all built from the same two first-stage lists per question.

First stages (depth 100): ``bm25`` (ArcadeDB FULL_TEXT) and ``dense`` (ArcadeDB LSM_VECTOR,
all-mpnet-base-v2). Fusions, each reading both lists to the same depth:

* fixed, in Python (:mod:`gabarito.retrieval.pipeline` / :mod:`gabarito.retrieval.fusion_functions`):
  RRF with k = 1, 10, 60 (the baseline) and 100; DBSF; CombSUM and CombMNZ of min-max scores
  (CombSUM of min-max scores ranks as the convex combination with equal weights);
* tuned by two-fold cross-fitting (:func:`gabarito.measure.tuning.cross_fit`): the convex
  combination of min-max scores (``linear_cv``, the weight of BM25) and weighted RRF with k = 60
  (``wrrf_cv``, weights ``2w`` on BM25 and ``2(1 - w)`` on dense, so ``w = 0.5`` is plain RRF);
* in ArcadeDB, one statement per question (:class:`~gabarito.retrieval.arcadedb.native_fusion.NativeFusion`):
  RRF with k = 60 (the identity check) and DBSF.
"""

from __future__ import annotations

from gabarito.core.methods import Method, leaf
from gabarito.core.runs import Run
from gabarito.measure.tuning import cross_fit
from gabarito.retrieval.arcadedb.native_fusion import NativeFusion
from gabarito.retrieval.fusion_functions import DBSF, CombSUM, Linear, WeightedRRF
from gabarito.retrieval.pipeline import RRF, Pipeline
from gabarito.retrieval.protocol import TextRetriever, VectorRetriever


def rrf_with(k: int) -> Method:
    """The study's RRF with constant ``k`` (in Python): the method ``rrf_k<k>``."""
    return leaf(f"rrf_k{k}")


RRF_KS = (1, 10, 60, 100)
BASELINE = rrf_with(60)
FIRST_STAGES = ("bm25", "dense")
GRID = tuple(round(i / 20, 2) for i in range(21))  # 0, 0.05, ..., 1: the weight of BM25
TUNE_MEASURE = "nDCG@10"

#: What each method is, for the results file.
DESCRIPTIONS = {
    "bm25": "ArcadeDB FULL_TEXT BM25 (first stage)",
    "dense": "all-mpnet-base-v2 through ArcadeDB's LSM_VECTOR index (first stage)",
    **{rrf_with(k): f"RRF with k = {k}, in Python" for k in RRF_KS},
    "wrrf_cv": "weighted RRF (k = 60, weights 2w and 2(1 - w)), w chosen by two-fold cross-fitting on nDCG@10",
    "linear_cv": "convex combination w * BM25 + (1 - w) * dense of min-max normalized scores, w chosen by "
                 "two-fold cross-fitting on nDCG@10",
    "dbsf": "distribution-based score fusion (mean +- 3 sd to [0, 1], summed), in Python",
    "combsum": "CombSUM of min-max normalized scores (ranks as the equal-weight convex combination)",
    "combmnz": "CombMNZ of min-max normalized scores",
    "rrf_k60_native": "RRF with k = 60 inside ArcadeDB (vector.fuse), one statement per question",
    "dbsf_native": "DBSF inside ArcadeDB (vector.fuse), one statement per question",
}
FIXED = {**{rrf_with(k): RRF(rrf_k=k) for k in RRF_KS}, "dbsf": DBSF(), "combsum": CombSUM(),
         "combmnz": CombSUM(mnz=True)}
TUNED = {"linear_cv": lambda w: Linear(weight=w), "wrrf_cv": lambda w: WeightedRRF(60, (2 * w, 2 * (1 - w)))}
NATIVE = {"rrf_k60_native": {"fusion": "rrf", "rrf_k": 60}, "dbsf_native": {"fusion": "dbsf"}}


def first_stages(index, encoder) -> list:
    bm25 = TextRetriever("bm25", index.bm25, info={"engine": "ArcadeDB", "index": "FULL_TEXT"})
    dense = VectorRetriever("dense", lambda v, d: index.knn(v, d, model_id=encoder.model_id), encoder,
                            info={"engine": "ArcadeDB", "index": "LSM_VECTOR"})
    return [bm25, dense]


def python_runs(index, encoder, queries, depth: int) -> tuple[dict[str, Run], dict]:
    """Both first stages and every fixed Python fusion of them; and the pipelines' provenance."""
    pipe = Pipeline(BASELINE, first_stages(index, encoder), fusion=FIXED[BASELINE])
    stages = pipe.stages(queries, depth)
    first = [stages[name] for name in FIRST_STAGES]
    runs = {name: stages[name] for name in FIRST_STAGES}
    runs.update({name: fuse(first, depth) for name, fuse in FIXED.items()})
    for name, run in runs.items():
        run.name = name
    prov = {"first_stages": [r.provenance() for r in pipe.first],
            "fusions": {name: fuse.provenance() for name, fuse in FIXED.items()}}
    return runs, prov


def tuned_runs(runs: dict[str, Run], qrels, depth: int, seed: int) -> dict[str, dict]:
    """Each tuned fusion cross-fitted on one judged set: ``{name: cross_fit result}``."""
    first = [runs[name] for name in FIRST_STAGES]
    return {name: cross_fit(lambda w, make=make: make(w)(first, depth), GRID, qrels, TUNE_MEASURE, seed, name=name)
            for name, make in TUNED.items()}


def native_runs(index, encoder, queries, depth: int) -> tuple[dict[str, Run], dict]:
    """The fusions ArcadeDB runs itself, and their provenance (with the questions fused alone)."""
    runs, prov = {}, {}
    for name, options in NATIVE.items():
        retriever = NativeFusion(index, encoder, name=name, model_id=encoder.model_id, **options)
        runs[name] = retriever.search(queries, depth)
        prov[name] = retriever.provenance()
    return runs, prov
