"""Index and query cost of ArcadeDB as the corpus grows, next to in-process references.

Stages, each on a freshly started embedded ArcadeDB server (so its memory is the stage's own):

1. Real collections, smallest to largest (default ADI -> Cranfield -> NPL): one type with a
   FULL_TEXT index (standard analyzer) and an LSM_VECTOR index (COSINE, INT8) over
   all-MiniLM-L6-v2 vectors. Measured: ingest time, vector index build (the first kNN query
   after ingest builds the graph), BM25 and kNN latency (median/p95 over >= 20 timed queries
   after warm-up) and the HTTP floor, the Java process's RSS (from /proc) idle / after ingest /
   after the build, ANN recall@10 against exact numpy search.
2. Synthetic: NPL's MiniLM vectors repeated with N(0, sigma^2) noise per dimension and
   renormalised, to the ``--synthetic`` sizes (30,000 and 100,000 by default), in a vector-only
   type with the same index settings. Queried with the default search breadth and with a higher
   efSearch (``vector.neighbors(index, vector, k, efSearch)``). 1,000,000 is tried only when the
   time extrapolated from the largest synthetic size stays within ``--budget-s`` (15 minutes);
   otherwise the skip and its reason are recorded.
3. Side by side, on every stage: ArcadeDB BM25 over HTTP vs bm25s in process and ArcadeDB kNN
   vs exact numpy, as queries per second, with their ratios (and recall for kNN).

Growth fits (log-log slope of cost vs number of documents, numpy.polyfit) are stored. All
traffic goes to 127.0.0.1; every loop is bounded by the number of queries and repetitions.

    python case-studies/standard_collections/bench_scaling.py
    python case-studies/standard_collections/bench_scaling.py --sizes adi --synthetic 2000   # tiny
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError, run_main
from gabarito.inputs.collections import COLLECTIONS, load_collection
from gabarito.measure.scaling import extrapolate_seconds, loglog_fit
from gabarito.measure.synthetic_vectors import K, MODEL
from gabarito.measure.timing import load_average
from gabarito.notes import note
from gabarito.retrieval.arcadedb import package_version
from gabarito.retrieval.models.collection_vectors import Vectors
from gabarito.study.runner import run_study, say
from gabarito.study.spec import StudySpec
from studies.standard_collections.scaling_stages import real_stage, synthetic_stage

HERE = Path(__file__).resolve().parent

NAME = "standard_collections/scaling"
TITLE = "ArcadeDB index and query cost as the corpus grows"
RESULTS = "scaling.json"
EF_FINDINGS = {
    "index_metadata": ("CREATE INDEX ... LSM_VECTOR METADATA {maxConnections, beamWidth, efSearch, ...}: "
                       "ArcadeDB 26.10 defaults maxConnections=32, beamWidth=100 (construction), efSearch "
                       "unset (LSMVectorIndexMetadata)"),
    # vector.neighbors(<index>, <vector>, <k>[, <efSearch> | {efSearch: n, ...}]): the 4th argument
    # overrides the index's efSearch for one query; the search breadth is max(k, efSearch)
    "query_time": note("scaling.efsearch_query_time"),
    # unset, a graph under 10,000 vectors searches max(k, 100) candidates, a larger one max(2k, 20)
    "default_when_unset": note("scaling.efsearch_default", threshold=10_000, small_min=100, large_factor=2,
                               large_min=20, engine_version="26.10.2"),
}


def add_arguments(ap) -> None:
    ap.add_argument("--sizes", default="adi,cranfield,npl", help="collections, smallest first")
    ap.add_argument("--synthetic", default="30000,100000",
                    help="comma-separated synthetic sizes for the vector-index stage (0 skips it)")
    ap.add_argument("--synthetic-large", type=int, default=1_000_000,
                    help="larger synthetic size, tried only within --budget-s (0 never)")
    ap.add_argument("--budget-s", type=float, default=900.0,
                    help="largest extrapolated ingest+build time allowed for the larger synthetic size")
    ap.add_argument("--synthetic-base", default="npl",
                    help="collection whose MiniLM vectors seed the synthetic set (npl; adi for a quick check)")
    ap.add_argument("--sigma", type=float, default=0.01, help="per-dimension noise of the synthetic copies")
    ap.add_argument("--ef-high", type=int, default=200, help="the higher efSearch tried at query time")
    ap.add_argument("--min-queries", type=int, default=20, help="timed queries per measurement, at least")
    ap.add_argument("--batch", type=int, default=500, help="rows per INSERT for the synthetic stage")
    ap.add_argument("--heap", default="4g", help="JVM heap of each embedded server")


def checked(ctx):
    """The parsed arguments, validated, with ``names``, ``synthetic_sizes`` and ``db_root`` added."""
    args = ctx.args
    if args.arcadedb_url:
        raise GabaritoError("the scaling benchmark measures servers it starts itself: "
                            "unset --arcadedb-url / $GABARITO_ARCADEDB_URL")
    args.names = [n.strip().lower() for n in args.sizes.split(",") if n.strip()]
    bad = [n for n in args.names + [args.synthetic_base] if n not in COLLECTIONS]
    if bad or not args.names:
        raise GabaritoError(f"unknown collection(s) {bad}")
    try:
        args.synthetic_sizes = sorted({int(x) for x in str(args.synthetic).split(",") if x.strip()} - {0})
    except ValueError:
        raise GabaritoError(f"--synthetic must be comma-separated integers, not {args.synthetic!r}") from None
    if args.min_queries < 1 or any(n < 0 for n in args.synthetic_sizes):
        raise GabaritoError("--min-queries must be >= 1 and synthetic sizes >= 0")
    args.db_root = ctx.db_dir("scaling")  # one fresh server (and database) per stage under it
    return args


# -- fits ---------------------------------------------------------------------------------------

def fits(real: dict, synthetic: dict) -> dict:
    names = list(real)
    n = [real[k]["n_docs"] for k in names]
    out = {"x": "number of documents (log10)", "y": "cost (log10)",
           "note": note("scaling.slope_reading")}

    def fit(key, xs, ys):
        try:
            out[key] = loglog_fit(xs, ys)
        except GabaritoError as exc:
            out[key] = {"skipped": str(exc)}

    fit("ingest_s", n, [real[k]["ingest_s"] for k in names])
    fit("ingest_s_vs_tokens", [real[k]["n_tokens"] for k in names], [real[k]["ingest_s"] for k in names])
    fit("bm25_median_ms", n, [real[k]["latency_ms"]["bm25"]["median"] for k in names])
    fit("bm25s_median_ms", n, [real[k]["reference_latency_ms"]["bm25s"]["median"] for k in names])
    fit("rss_after_build_mb", n, [(real[k]["memory_mb"]["after_build"] or {}).get("rss_mb") for k in names])
    syn = list(synthetic.values())
    vn = n + [s["n_docs"] for s in syn]
    fit("vector_build_s", vn, [real[k]["vector_build_s"] for k in names] + [s["vector_build_s"] for s in syn])
    fit("knn_median_ms", vn, [real[k]["latency_ms"]["knn"]["median"] for k in names]
        + [s["latency_ms"]["knn_default"]["median"] for s in syn])
    fit("numpy_exact_median_ms", vn, [real[k]["reference_latency_ms"]["numpy_exact"]["median"] for k in names]
        + [s["reference_latency_ms"]["numpy_exact"]["median"] for s in syn])
    if syn:
        sn = [s["n_docs"] for s in syn]
        fit("synthetic_ingest_s", sn, [s["ingest_s"] for s in syn])
    return out


def larger_size(real: dict, synthetic: dict, base: np.ndarray, args) -> dict | None:
    """Why the larger synthetic size is skipped (extrapolated time over budget), or None to run it."""
    large, top = args.synthetic_large, args.synthetic_sizes[-1]
    first = synthetic[str(top)]
    measured_slope = None
    try:
        pts = [r["n_docs"] for r in real.values()] + [s["n_docs"] for s in synthetic.values()]
        bs = [r["vector_build_s"] for r in real.values()] + [s["vector_build_s"] for s in synthetic.values()]
        measured_slope = loglog_fit(pts, bs)["slope"]
    except GabaritoError:
        pass
    # a graph build is O(n log n) in theory: a fitted slope below 1 comes from fixed costs
    # at the small sizes, so the extrapolation never assumes less than linear growth
    build_slope = max(1.0, measured_slope or 1.0)
    est_ingest = extrapolate_seconds(top, first["ingest_s"], large, 1.0)
    est_build = extrapolate_seconds(top, first["vector_build_s"], large, build_slope)
    est = est_ingest + est_build
    if est <= args.budget_s:
        return None
    return {
        # the extrapolated ingest + graph build exceeds the budget (from the largest measured size:
        # ingest grows linearly, the build with slope max(1, fitted))
        "reason": note("scaling.skipped_budget", ingest_s=est_ingest, build_s=est_build, total_min=est / 60,
                       budget_min=args.budget_s / 60, from_vectors=top, first_ingest_s=first["ingest_s"],
                       first_build_s=first["vector_build_s"], slope=build_slope, fitted_slope=measured_slope,
                       rss_mb=(first["memory_mb"]["after_build"] or {}).get("rss_mb"),
                       heap_gb=_heap_gb(args.heap)),
        "estimated_ingest_s": est_ingest, "estimated_build_s": est_build,
        "fitted_build_slope": measured_slope, "assumed_build_slope": build_slope,
        "raw_float32_gb": large * base.shape[1] * 4 / 1e9, "heap_gb": _heap_gb(args.heap)}


def synthetic_stages(ctx, args, vec: Vectors, real: dict) -> tuple[dict, dict]:
    synthetic, skipped = {}, {}
    if not args.synthetic_sizes:
        return synthetic, skipped
    seed_c = load_collection(args.synthetic_base, mirror=args.mirror)
    base = vec.documents(MODEL, [d.text for d in seed_c.documents], args.synthetic_base)
    q_vecs = vec.query_vectors(MODEL, [q.query for q in seed_c.judged_queries()], args.synthetic_base)
    for n in args.synthetic_sizes:
        with ctx.phase(f"synthetic {n}"):
            synthetic[str(n)] = synthetic_stage(n, base, q_vecs, args, ctx.seed)
    large = args.synthetic_large
    if large and large > args.synthetic_sizes[-1]:
        skip = larger_size(real, synthetic, base, args)
        if skip is not None:
            skipped[str(large)] = skip
            say(f"== synthetic {large}: skipped ({skip['reason']})")
        else:
            with ctx.phase(f"synthetic {large}"):
                synthetic[str(large)] = synthetic_stage(large, base, q_vecs, args, ctx.seed)
    return synthetic, skipped


def engine_record(args) -> dict:
    return {"name": "ArcadeDB", "package": f"arcadedb-embedded {package_version()}",
            "mode": "embedded server over HTTP on 127.0.0.1, a fresh server per stage", "heap": args.heap,
            "text_index": "FULL_TEXT, StandardAnalyzer, BM25 k1=1.2 b=0.75 (defaults)",
            "vector_index": "LSM_VECTOR, COSINE, INT8 quantization, other settings default",
            "efsearch": EF_FINDINGS}


def parameters(args) -> dict:
    return {"sizes": args.names, "k": K, "min_timed_queries": args.min_queries, "warmup_calls": 5,
            "synthetic": args.synthetic_sizes, "synthetic_large": args.synthetic_large, "budget_s": args.budget_s,
            "sigma": args.sigma, "ef_high": args.ef_high, "ingest_batch_real": 200,
            "ingest_batch_synthetic": args.batch,
            "memory": "VmRSS / VmHWM of the server's Java process from /proc/<pid>/status",
            "timing": "wall clock per call (time.perf_counter), HTTP round trip included",
            "in_process_threads": "bm25s and numpy timed with BLAS limited to 1 thread "
                                  "(threadpoolctl); the server uses its own threads",
            "synthetic_base": args.synthetic_base}


def run(ctx) -> dict:
    args = checked(ctx)
    load_start = load_average()
    vec = Vectors(device=ctx.device)
    real = {}
    for name in args.names:
        with ctx.phase(f"real {name}"):
            real[name] = real_stage(name, args, vec)
    synthetic, skipped = synthetic_stages(ctx, args, vec, real)
    prov = ctx.provenance(corpus={"collections": args.names, "synthetic_base": args.synthetic_base},
                          model=vec.encoder(MODEL).provenance(), engine=engine_record(args),
                          parameters=parameters(args))
    prov["machine"]["load_average_start"] = load_start
    return {"provenance": prov, "real": real, "synthetic": synthetic, "skipped": skipped,
            "fits": fits(real, synthetic), "timings": {"wall_s": ctx.wall_s()}}


def main(argv=None) -> "NoReturn":  # noqa: F821
    """Run through the study runner (gold check, shared arguments, atomic write) into scaling.json."""
    spec = dataclasses.replace(StudySpec.load(HERE / "study.json"), name=NAME, title=TITLE, results=RESULTS)

    def main_(argv_):
        run_study(spec, run, argv_, add_arguments=add_arguments, doc=__doc__)
        return 0

    run_main(main_, argv)


def _heap_gb(heap: str) -> float | None:
    try:
        unit = heap[-1].lower()
        return float(heap[:-1]) * {"g": 1, "m": 1 / 1024}[unit]
    except (ValueError, KeyError, IndexError):
        return None


if __name__ == "__main__":
    main()
