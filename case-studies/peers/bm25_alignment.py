"""The two BM25 engines of ``gabarito evaluate``, side by side on a classic collection (issue 42, item 5).

Both engines are run through :func:`gabarito.evaluation.run.run_evaluation`, the code path of
``gabarito evaluate --method bm25 --analyzer standard`` (whole documents, no title prefix):

* ``arcadedb``: ArcadeDB's FULL_TEXT index (StandardAnalyzer), the reference;
* ``memory_before``: the memory engine as ``evaluate --engine memory`` searches today
  (:class:`~gabarito.retrieval.memory.BM25`, ``repeated_terms="each"``: a question's repeated word
  counts per occurrence, as in Lucene's classic query);
* ``memory_aligned``: the same path with the memory engine scoring as ArcadeDB does
  (:func:`~gabarito.retrieval.memory.arcadedb_bm25`: each distinct word once, ``k1 + 1`` kept).

Written: for each engine MRR@10 and nDCG@10 (the scorer's Report), and for each memory variant its
agreement with ArcadeDB (:func:`gabarito.measure.parity.parity`: identical top 10, overlap, score
differences) and the questions whose reciprocal rank differs.

    python case-studies/peers/bm25_alignment.py                     # CISI (~1 min)
    python case-studies/peers/bm25_alignment.py --collection medline
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from unittest import mock

from gabarito.evaluation.config import EvalConfig
from gabarito.evaluation.run import run_evaluation
from gabarito.measure import metrics
from gabarito.measure.parity import parity
from gabarito.measure.score import score_runs
from gabarito.retrieval import memory
from gabarito.retrieval.arcadedb import package_version
from gabarito.retrieval.memory import tokenize
from gabarito.study.runner import variant_main
from studies.peers.bench_bm25 import load_checked

HERE = Path(__file__).resolve().parent
MEASURES = ("RR@10", "nDCG@10")
ENGINES = ("arcadedb", "memory_before", "memory_aligned")
K = 10


def add_arguments(ap) -> None:
    ap.add_argument("--collection", default="cisi", help="a classic collection (default: cisi)")


def evaluated(engine: str, documents, queries, db_dir: Path) -> dict:
    """One ``gabarito evaluate`` run of BM25 (whole documents) on ``engine``."""
    cfg = EvalConfig(segmentation="document", prefix_title=False, method="bm25", model=None,
                     engine="memory" if engine.startswith("memory") else "arcadedb", measures=MEASURES)
    if engine == "memory_aligned":
        with mock.patch.object(memory, "BM25", functools.partial(memory.BM25, repeated_terms="once")):
            return run_evaluation(documents, queries, cfg, db_dir=db_dir, echo=None)
    return run_evaluation(documents, queries, cfg, db_dir=db_dir, echo=None)


def agreement(ref, other, qrels) -> dict:
    """How far ``other`` is from ``ref``: top-10 agreement and the questions whose RR@10 differs."""
    per = {name: metrics.evaluate(run, qrels, list(MEASURES)) for name, run in (("ref", ref), ("other", other))}
    out = parity(ref, other, per["ref"]["nDCG@10"], per["other"]["nDCG@10"], k=K)
    rr_a, rr_b = per["ref"]["RR@10"], per["other"]["RR@10"]
    out["rr_differs"] = sorted(q for q in rr_a if abs(rr_a[q] - rr_b[q]) > 1e-12)
    out["rr_better_than_reference"] = sum(rr_b[q] > rr_a[q] + 1e-12 for q in rr_a)
    out["rr_worse_than_reference"] = sum(rr_b[q] < rr_a[q] - 1e-12 for q in rr_a)
    return out


def run(ctx) -> dict:
    name = ctx.args.collection.strip().lower()
    ctx.gold_sha256 = {rel: sha for rel, sha in ctx.gold_sha256.items()
                       if rel == f"../standard_collections/qrels/{name}.txt"}
    c = load_checked(ctx, name)
    judged = c.judged_queries()
    records = {}
    with tempfile.TemporaryDirectory(prefix="bm25-alignment-") as scratch:
        for engine in ENGINES:
            with ctx.phase(f"{engine} on {name}"):
                records[engine] = evaluated(engine, c.documents, judged, Path(scratch))
    runs = {e: r.ranked for e, r in records.items()}
    qrels = records["arcadedb"].qrels
    report = score_runs(runs, qrels, list(MEASURES), seed=ctx.seed, resamples=ctx.resamples)
    repeated = sum(len(t) != len(set(t)) for t in (tokenize(q.query, frozenset()) for q in judged))
    prov = ctx.provenance(
        corpus={"collection": name, "documents": len(c.documents), "questions": len(judged)}, model=None,
        engine={"arcadedb": {"name": "ArcadeDB", "version": package_version(), "package": "arcadedb-embedded",
                             "version_recorded": records["arcadedb"]["engine"]["version"]},
                "memory": records["memory_before"]["engine"]},
        parameters={"k": K, "measures": list(MEASURES), "analyzer": "standard", "segmentation": "document",
                    "prefix_title": False, "k1": 1.2, "b": 0.75})
    return {"provenance": prov, "collection": name, "questions": len(judged),
            "questions_with_a_repeated_word": repeated, "reference": "arcadedb",
            "report": report.to_dict(),
            "agreement": {e: agreement(runs["arcadedb"], runs[e], qrels) for e in ENGINES[1:]}}


def main(argv=None) -> "NoReturn":  # noqa: F821
    variant_main(HERE, run, add_arguments, name="peers/bm25_alignment",
                 title="The memory engine's BM25 beside ArcadeDB's", results="bm25_alignment.json",
                 doc=__doc__, argv=argv)


if __name__ == "__main__":
    main()
