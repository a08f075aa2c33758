"""Vector search side by side: ArcadeDB LSM_VECTOR (over HTTP), FAISS HNSW and flat, hnswlib,
usearch and exact numpy, on the same synthetic vectors, in one run.

Vectors: NPL's all-MiniLM-L6-v2 document vectors (11,429, 384 dims) repeated with N(0, 0.01²)
noise per dimension and renormalised (``measure.scaling.perturbed_copies``, the scaling study's
generator), at 10,000 and 100,000 rows; queries: NPL's 93 judged queries (MiniLM). Per size:
ingest/build time per engine, memory (ArcadeDB: the server's RSS; in process: growth of this
process's RSS during the build), recall@10 against exact search, and queries per second at three
search widths (efSearch / expansion_search 20, 100, 200; ArcadeDB's through the 4th argument of
``vector.neighbors``), every engine and width timed interleaved query by query, one query at a
time. The HTTP floor (``SELECT 1``) is timed in the same loop.

1,000,000 rows: the exact engines always (they need only the matrix); each graph engine, and
ArcadeDB, only when its build time extrapolated from the measured sizes (log-log fit, slope at
least 1) fits in ``--budget-s``; for the others the extrapolation is recorded as such.

    python case-studies/peers/bench_vectors.py                       # 10k, 100k, 1M (~15 min)
    python case-studies/peers/bench_vectors.py --sizes 2000 --large 0 --base adi   # quick
"""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.inputs.collections import load_collection
from gabarito.measure.scaling import exact_topk, extrapolate_seconds, loglog_fit, perturbed_copies, recall_at_k
from gabarito.measure.synthetic_vectors import (K, MODEL, fresh_database, ingest_synthetic, knn_sql, rss,
                                                start_server)
from gabarito.measure.timing import in_process, interleaved, load_average
from gabarito.retrieval.arcadedb import package_version
from gabarito.retrieval.models.collection_vectors import Vectors
from gabarito.study.runner import say, variant_main
from studies.peers.vector_engines import EF_CONSTRUCTION, ENGINES, M, dist_version, rss_mb

HERE = Path(__file__).resolve().parent

WIDTHS = (20, 100, 200)


def add_arguments(ap) -> None:
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--large", type=int, default=1_000_000, help="the large size (0: none)")
    ap.add_argument("--budget-s", type=float, default=900.0,
                    help="largest extrapolated build time of one graph engine at the large size")
    ap.add_argument("--base", default="npl", help="collection whose MiniLM vectors seed the set")
    ap.add_argument("--sigma", type=float, default=0.01)
    ap.add_argument("--min-queries", type=int, default=186, help="timed queries per engine and width")
    ap.add_argument("--heap", default="4g")
    ap.add_argument("--batch", type=int, default=500, help="rows per INSERT into ArcadeDB")


def arcadedb_part(n: int, base: np.ndarray, args, seed: int, db_root: Path):
    """Start a server, ingest ``n`` perturbed vectors (which also fills the matrix), build the
    graph (first query); returns the matrix, the server, its client and the knn function."""
    server = start_server(db_root / f"vectors_{n}", args.heap)
    mem = {"idle": rss(server)}
    client, index_name = fresh_database(server, f"peers_vectors_{n}", int(base.shape[1]), timeout=1200)
    matrix = np.empty((n, base.shape[1]), dtype=np.float32)
    ingest_s = ingest_synthetic(client, base, matrix, SimpleNamespace(sigma=args.sigma, batch=args.batch), seed)
    sql = knn_sql(index_name, True)

    def knn(v, width):
        rows = client.query(sql, {"v": v.tolist(), "k": K, "ef": int(width)})
        return [int(r["doc_id"][1:]) for r in sorted(rows, key=lambda r: (r["distance"], r["doc_id"]))][:K]

    t0 = time.perf_counter()
    knn(base[0], WIDTHS[0])
    build_s = time.perf_counter() - t0
    mem["after_build"] = rss(server)
    return matrix, server, client, knn, {"ingest_s": ingest_s, "build_s": build_s, "memory_mb": mem}


def build_in_process(matrix: np.ndarray, which, estimates: dict | None = None) -> dict:
    built = {}
    for cls in which:
        eta = ((estimates or {}).get(cls.name) or {}).get("estimated_s")
        say(f"  {cls.name}: building {len(matrix)} vectors" + (f" (~{eta:.0f} s estimated)" if eta else ""))
        before = rss_mb()
        t0 = time.perf_counter()
        engine = cls(matrix)
        seconds = time.perf_counter() - t0
        after = rss_mb()
        built[cls.name] = {"engine": engine, "build_s": seconds,
                           "rss_growth_mb": (after - before) if before is not None and after is not None else None}
        say(f"  {cls.name}: built in {seconds:.1f} s")
    return built


def search_fns(built: dict, arcade_knn) -> dict:
    fns = {}
    for name, b in built.items():
        engine = b["engine"]
        for w in ((None,) if engine.exact else WIDTHS):
            fns[name if w is None else f"{name}@{w}"] = (lambda e, w_: lambda v: e.search(v, K, w_))(engine, w)
    if arcade_knn is not None:
        for w in WIDTHS:
            fns[f"arcadedb@{w}"] = (lambda w_: lambda v: arcade_knn(v, w_))(w)
    return fns


def size_stage(n: int, base, queries, args, seed: int, db_root: Path, *, graph: set[str] | None = None,
               estimates: dict | None = None) -> dict:
    """One size: every engine (``graph`` None), or the exact ones and the graph engines named in
    ``graph`` (``"arcadedb"`` among them for the server)."""
    which = "every engine" if graph is None else "exact engines and " + (", ".join(sorted(graph)) or "no graph engine")
    say(f"== {n} vectors ({which})")
    arcade, server, client, knn = {}, None, None, None
    try:
        if graph is None or "arcadedb" in graph:
            matrix, server, client, knn, arcade = arcadedb_part(n, base, args, seed, db_root)
        else:
            matrix = np.empty((n, base.shape[1]), dtype=np.float32)
            for start, block in perturbed_copies(base, n, sigma=args.sigma, seed=seed, chunk=10_000):
                matrix[start:start + len(block)] = block
        built = build_in_process(matrix, [c for c in ENGINES if graph is None or c.exact or c.name in graph],
                                 estimates)
        _single_thread_faiss()
        exact = exact_topk(matrix, queries, K).tolist()
        fns = search_fns(built, knn)
        results = {name: [fn(v) for v in queries] for name, fn in fns.items()}
        qs = list(queries)
        if server is not None:
            fns["http_floor"] = lambda _v: client.query("SELECT 1 AS one")
        latency = in_process(lambda: interleaved(fns, qs, args.min_queries))
        if server is not None:
            arcade["memory_mb"]["after_queries"] = rss(server)
    finally:
        if client is not None:
            client.close()
        if server is not None:
            server.stop()
    rows = {name: {"recall@10": recall_at_k(results[name], exact, K), "latency_ms": latency[name],
                   "qps": latency[name]["qps"]} for name in results}
    say("  " + ", ".join(f"{k} r={v['recall@10']['mean']:.3f} {v['qps']:.0f}/s" for k, v in rows.items()))
    return {"n": n, "engines": {name: {k: v for k, v in b.items() if k != "engine"} for name, b in built.items()},
            "arcadedb": arcade or None, "searches": rows,
            "http_floor_ms": latency.get("http_floor"), "load_average": load_average()}


def _single_thread_faiss() -> None:
    try:
        import faiss

        faiss.omp_set_num_threads(1)
    except ImportError:  # pragma: no cover - faiss-cpu is in the peers extra
        pass


def large_plan(stages: dict, large: int, budget_s: float) -> dict:
    """Extrapolated build time of every graph engine at ``large`` rows (log-log fit of the
    measured sizes, slope at least 1); the large size runs them only if all fit the budget."""
    sizes = sorted(int(k) for k in stages)
    est = {}
    names = [n for n, e in stages[str(sizes[-1])]["engines"].items() if not n.startswith(("numpy", "faiss_flat"))]
    series = {n: [stages[str(s)]["engines"][n]["build_s"] for s in sizes] for n in names}
    series["arcadedb"] = [stages[str(s)]["arcadedb"]["ingest_s"] + stages[str(s)]["arcadedb"]["build_s"] for s in sizes]
    for name, ys in series.items():
        slope = max(1.0, loglog_fit(sizes, ys)["slope"]) if len(sizes) > 1 else 1.0
        est[name] = {"estimated_s": extrapolate_seconds(sizes[-1], ys[-1], large, slope), "slope": slope,
                     "from": {str(s): y for s, y in zip(sizes, ys)}}
    worst = max(v["estimated_s"] for v in est.values())  # run_graph_engines: every one fits
    return {"estimates": est, "budget_s": budget_s, "run_graph_engines": worst <= budget_s,
            "run": sorted(k for k, v in est.items() if v["estimated_s"] <= budget_s),
            "total_estimated_s": sum(v["estimated_s"] for v in est.values())}


def run(ctx) -> dict:
    args = ctx.args
    sizes = sorted({int(x) for x in args.sizes.split(",") if x.strip()})
    if not sizes or min(sizes) < 100 or args.arcadedb_url:
        raise GabaritoError("--sizes of at least 100 rows; the benchmark starts its own servers (no --arcadedb-url)")
    load_start = load_average()
    vec = Vectors(device=ctx.device)
    c = load_collection(args.base, mirror=ctx.mirror())
    base = vec.documents(MODEL, [d.text for d in c.documents], args.base)
    queries = vec.query_vectors(MODEL, [q.query for q in c.judged_queries()], args.base)
    db_root = ctx.db_dir("peers")
    stages, plan = {}, None
    for n in sizes:
        with ctx.phase(f"vectors {n}"):
            stages[str(n)] = size_stage(n, base, queries, args, ctx.seed, db_root)
    if args.large and args.large > sizes[-1]:
        plan = large_plan(stages, args.large, args.budget_s)
        say(f"== {args.large}: graph engines run: {', '.join(plan['run']) or 'none'} "
            f"(estimated builds: " + ", ".join(f"{k} {v['estimated_s'] / 60:.1f} min"
                                               for k, v in plan["estimates"].items()) + ")")
        with ctx.phase(f"vectors {args.large}"):
            stages[str(args.large)] = size_stage(args.large, base, queries, args, ctx.seed, db_root,
                                                 graph=set(plan["run"]), estimates=plan["estimates"])
    load_end = load_average()
    prov = ctx.provenance(
        corpus={"base": f"{args.base} all-MiniLM-L6-v2 document vectors + N(0, sigma^2) noise, renormalised",
                "queries": f"{args.base} judged queries", "sigma": args.sigma,
                "collection": args.base, "n_base": int(base.shape[0]), "n_queries": int(queries.shape[0])},
        model=vec.encoder(MODEL).provenance(),
        engine={"arcadedb": {"name": "ArcadeDB", "version": package_version(), "package": "arcadedb-embedded"},
                **{cls.name: {"name": cls.package, "version": dist_version(cls.package)} for cls in ENGINES}},
        parameters={"sizes": sizes, "large": args.large, "widths": list(WIDTHS), "k": K, "M": M,
                    "ef_construction": EF_CONSTRUCTION, "min_timed_queries": args.min_queries,
                    "heap": args.heap, "budget_s": args.budget_s,
                    "timing": "one query per call, every engine and width interleaved; in-process on 1 thread",
                    "arcadedb_index": "LSM_VECTOR, COSINE, INT8 quantization; maxConnections 32, beamWidth 100 (defaults)",
                    "builds": "in-process engines build with every core; ArcadeDB builds its graph on the first query"})
    prov["machine"].update(load_average_start=load_start, load_average_end=load_end,
                           latency_valid=bool(load_start and load_end and max(load_start[0], load_end[0]) <= 1.0),
                           memory_total_gb=_mem_total_gb())
    return {"provenance": prov, "sizes": stages, "large_plan": plan}


def _mem_total_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError):
        return None
    return None


def main(argv=None) -> "NoReturn":  # noqa: F821
    variant_main(HERE, run, add_arguments, name="peers/vectors",
                 title="Vector search: ArcadeDB beside FAISS, hnswlib, usearch and numpy", results="vectors.json",
                 doc=__doc__, argv=argv)


if __name__ == "__main__":
    main()
