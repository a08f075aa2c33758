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

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from embeddings import MODELS, Vectors

from gabarito.measure import timing
from gabarito.inputs.collections import COLLECTIONS, load_collection
from gabarito.retrieval.arcadedb import (
    ArcadeClient,
    ArcadeIndex,
    ArcadeServer,
    package_version,
)
from gabarito.errors import GabaritoError, run_main
from gabarito.hashing import atomic_write_json
from gabarito.retrieval.models import cache_dir
from gabarito.measure.parity import BM25Reference
from gabarito.study.records import git_state, machine, now_iso
from gabarito.measure.scaling import (
    exact_topk,
    extrapolate_seconds,
    loglog_fit,
    perturbed_copies,
    process_memory,
    recall_at_k,
    throughput,
)

MODEL = "minilm"
K = 10
VECTOR_DDL = "LSM_VECTOR METADATA {{dimensions: {dim}, similarity: 'COSINE', quantization: 'INT8'}}"
SYN_TYPE = "Syn"
EF_FINDINGS = {
    "index_metadata": ("CREATE INDEX ... LSM_VECTOR METADATA {maxConnections, beamWidth, efSearch, ...}: "
                       "ArcadeDB 26.10 defaults maxConnections=32, beamWidth=100 (construction), efSearch "
                       "unset (LSMVectorIndexMetadata)"),
    "query_time": ("vector.neighbors(<index>, <vector>, <k>[, <efSearch> | {efSearch: n, ...}]) -- the 4th "
                   "argument overrides the index's efSearch for one query; the search breadth is max(k, efSearch)"),
    "default_when_unset": ("graphs under 10,000 vectors search max(k, 100) candidates, larger ones "
                           "max(2k, 20) (LSMVectorIndex, arcadedb-engine 26.10.2)"),
}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    ap.add_argument("--mirror", help="local dataset mirror (or $GABARITO_DATA_MIRROR)")
    ap.add_argument("--db-dir", type=Path, default=cache_dir() / "arcadedb-scaling",
                    help="root folder for the servers (databases are recreated each run)")
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    args.names = [n.strip().lower() for n in args.sizes.split(",") if n.strip()]
    bad = [n for n in args.names if n not in COLLECTIONS]
    if args.synthetic_base not in COLLECTIONS:
        bad.append(args.synthetic_base)
    if bad or not args.names:
        ap.error(f"unknown collection(s) {bad}")
    try:
        args.synthetic_sizes = sorted({int(x) for x in str(args.synthetic).split(",") if x.strip()} - {0})
    except ValueError:
        ap.error(f"--synthetic must be comma-separated integers, not {args.synthetic!r}")
    if args.min_queries < 1 or any(n < 0 for n in args.synthetic_sizes):
        ap.error("--min-queries must be >= 1 and synthetic sizes >= 0")
    return args


def rss(server: ArcadeServer) -> dict | None:
    return process_memory(server.process.pid if server.process else None)


def load_average() -> list[float] | None:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def timed(fn, inputs, min_queries: int) -> dict:
    """Median/p95 of ``fn`` over ``inputs``, enough passes for ``min_queries`` samples, 5 warm-ups."""
    reps = max(1, math.ceil(min_queries / len(inputs)))
    samples = timing.time_calls(fn, inputs, repeat=reps, warmup=5)
    out = timing.summarize(samples)
    out["qps"] = throughput(len(samples), sum(samples) / 1000.0)
    return out


def interleaved(fns: dict, inputs, min_queries: int) -> dict:
    """Like :func:`timed` for several settings at once, alternating them query by query so that
    every setting meets the same load on a shared machine (no setting is timed in a quieter spell)."""
    reps = max(1, math.ceil(min_queries / len(inputs)))
    samples = {name: [] for name in fns}
    for _ in range(reps):
        for x in inputs:
            for name, fn in fns.items():
                t0 = time.perf_counter()
                fn(x)
                samples[name].append((time.perf_counter() - t0) * 1000.0)
    out = {}
    for name, values in samples.items():
        out[name] = timing.summarize(values)
        out[name]["qps"] = throughput(len(values), sum(values) / 1000.0)
        out[name]["order"] = "interleaved with " + ", ".join(n for n in fns if n != name)
    return out


def start_server(root: Path, heap: str) -> ArcadeServer:
    server = ArcadeServer(root, heap=heap).start()
    return server


def knn_sql(index_name: str, ef: bool) -> str:
    arg = ", :ef" if ef else ""
    return f"SELECT doc_id, distance FROM (SELECT expand(vector.neighbors('{index_name}', :v, :k{arg})))"


def in_process(fn):
    """Run ``fn`` with BLAS limited to one thread: on a shared 2-core machine a second BLAS thread
    mostly spins against the server and the other processes, and it makes medians erratic."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn / numpy stacks
        return fn()
    with threadpool_limits(limits=1):
        return fn()


def exact_search_fn(matrix: np.ndarray):
    def search(v):
        sims = matrix @ v
        part = np.argpartition(-sims, K - 1)[:K] if K < sims.size else np.arange(sims.size)
        return part[np.lexsort((part, -sims[part]))]
    return search


# -- stage 1: real collections ------------------------------------------------------------------

def real_stage(name: str, args, vec: Vectors) -> dict:
    c = load_collection(name, mirror=args.mirror)
    judged = [q for q in c.queries if q.relevant_ids]
    docs = [{"doc_id": d.id, "text": d.text} for d in c.documents]
    doc_vecs = vec.documents(MODEL, [d.text for d in c.documents], name)
    q_vecs = vec.query_vectors(MODEL, [q.query for q in judged], name)
    n_tokens = sum(len(d.text.split()) for d in c.documents)
    print(f"== {name}: {len(docs)} documents, {len(judged)} queries", flush=True)
    root = args.db_dir / name
    server = start_server(root, args.heap)
    try:
        mem = {"idle": rss(server)}
        client = ArcadeClient(server.url, server.user, server.password, f"scale_{name}")
        if client.database_exists():
            client.drop_database()
        client.create_database()
        index = ArcadeIndex(client, "Doc")
        index.create(["text"], int(doc_vecs.shape[1]), MODELS[MODEL], extra={"collection": name})
        t0 = time.perf_counter()
        index.ingest(docs, doc_vecs, batch_size=200, progress=False)
        ingest_s = time.perf_counter() - t0
        mem["after_ingest"] = rss(server)
        index.bm25("warm up", K)
        t0 = time.perf_counter()
        index.knn(q_vecs[0], K)
        build_s = time.perf_counter() - t0
        mem["after_build"] = rss(server)
        questions = [q.query for q in judged]
        lat = {
            "http_floor": timed(lambda _: index.floor(), questions, args.min_queries),
            "bm25": timed(lambda q: index.bm25(q, K), questions, args.min_queries),
            "knn": timed(lambda v: index.knn(v, K), list(q_vecs), args.min_queries),
        }
        mem["after_queries"] = rss(server)
        ann = [[d for d, _ in index.knn(v, K)] for v in q_vecs]
        client.close()
    finally:
        server.stop()
    ids = [d["doc_id"] for d in docs]
    exact = [[ids[i] for i in row] for row in exact_topk(doc_vecs, q_vecs, K)]
    # in-process references, same queries, same k
    t0 = time.perf_counter()
    ref = BM25Reference({d["doc_id"]: d["text"] for d in docs})
    bm25s_index_s = time.perf_counter() - t0
    ref_lat = in_process(lambda: timed(lambda q: ref.search(q, K), questions, args.min_queries))
    np_lat = in_process(lambda: timed(exact_search_fn(doc_vecs), list(q_vecs), args.min_queries))
    side = side_by_side(lat["bm25"], ref_lat, lat["knn"], np_lat)
    out = {"n_docs": len(docs), "n_tokens": n_tokens, "n_queries": len(judged), "dim": int(doc_vecs.shape[1]),
           "ingest_s": ingest_s, "ingest_docs_per_s": len(docs) / ingest_s,
           "vector_build_s": build_s, "latency_ms": lat, "memory_mb": mem,
           "ann_recall": recall_at_k(ann, exact, K), "bm25s_index_s": bm25s_index_s,
           "reference_latency_ms": {"bm25s": ref_lat, "numpy_exact": np_lat}, "side_by_side": side,
           "load_average": load_average()}
    print(f"  ingest {ingest_s:.1f} s, build {build_s:.2f} s, BM25 median {lat['bm25']['median']:.2f} ms, "
          f"kNN median {lat['knn']['median']:.2f} ms, recall@10 {out['ann_recall']['mean']:.3f}, "
          f"RSS {mem['after_build']}", flush=True)
    return out


def side_by_side(bm25_db, bm25_ref, knn_db, knn_ref) -> dict:
    return {
        "bm25": {"arcadedb_http_qps": bm25_db["qps"], "bm25s_in_process_qps": bm25_ref["qps"],
                 "ratio_bm25s_over_arcadedb": _ratio(bm25_ref["qps"], bm25_db["qps"])},
        "knn": {"arcadedb_http_qps": knn_db["qps"], "numpy_exact_qps": knn_ref["qps"],
                "ratio_numpy_over_arcadedb": _ratio(knn_ref["qps"], knn_db["qps"])},
    }


def _ratio(a, b):
    return a / b if a and b else None


# -- stage 2: synthetic vectors ------------------------------------------------------------------

def synthetic_stage(n: int, base: np.ndarray, q_vecs: np.ndarray, args) -> dict:
    print(f"== synthetic: {n} vectors ({base.shape[0]} {args.synthetic_base} MiniLM vectors + noise "
          f"sigma={args.sigma})",
          flush=True)
    root = args.db_dir / f"synthetic_{n}"
    server = start_server(root, args.heap)
    matrix = np.empty((n, base.shape[1]), dtype=np.float32)
    try:
        mem = {"idle": rss(server)}
        client = ArcadeClient(server.url, server.user, server.password, f"scale_synthetic_{n}", timeout=600)
        if client.database_exists():
            client.drop_database()
        client.create_database()
        for sql in (f"CREATE DOCUMENT TYPE {SYN_TYPE}", f"CREATE PROPERTY {SYN_TYPE}.doc_id STRING",
                    f"CREATE PROPERTY {SYN_TYPE}.embedding ARRAY_OF_FLOATS",
                    f"CREATE INDEX ON {SYN_TYPE} (doc_id) UNIQUE"):
            client.command(sql)
        created = client.command(f"CREATE INDEX ON {SYN_TYPE} (embedding) "
                                 + VECTOR_DDL.format(dim=int(base.shape[1])))
        index_name = created[0]["name"]
        insert = f"INSERT INTO {SYN_TYPE} CONTENT :rows RETURN @rid"
        t0 = time.perf_counter()
        next_report = 0.1
        for start, block in perturbed_copies(base, n, sigma=args.sigma, seed=20260817, chunk=10_000):
            matrix[start:start + len(block)] = block
            for s in range(0, len(block), args.batch):
                rows = [{"doc_id": f"s{start + s + i}", "embedding": v.tolist()}
                        for i, v in enumerate(block[s:s + args.batch])]
                got = len(client.command(insert, {"rows": rows}))
                if got != len(rows):
                    raise GabaritoError(f"synthetic ingest: {got} of {len(rows)} rows inserted")
            done = (start + len(block)) / n
            if done >= next_report:
                spent = time.perf_counter() - t0
                print(f"  ingested {start + len(block)}/{n} ({spent:.0f} s, ~{spent / done - spent:.0f} s left)",
                      flush=True)
                next_report = done + 0.1
        ingest_s = time.perf_counter() - t0
        mem["after_ingest"] = rss(server)
        sql_default, sql_ef = knn_sql(index_name, False), knn_sql(index_name, True)

        def knn(v, ef=None):
            params = {"v": v.tolist(), "k": K}
            if ef is not None:
                params["ef"] = int(ef)
            rows = client.query(sql_ef if ef is not None else sql_default, params)
            return [r["doc_id"] for r in sorted(rows, key=lambda r: (r["distance"], r["doc_id"]))][:K]

        t0 = time.perf_counter()
        knn(q_vecs[0])
        build_s = time.perf_counter() - t0
        mem["after_build"] = rss(server)
        print(f"  ingest {ingest_s:.1f} s, graph build (first query) {build_s:.1f} s, RSS {mem['after_build']}",
              flush=True)
        qs = list(q_vecs)
        for v in qs:  # one untimed pass of both settings first, so neither is timed on a colder JVM
            knn(v)
            knn(v, args.ef_high)
        lat = {"http_floor": timed(lambda _: client.query("SELECT 1 AS one"), qs, args.min_queries),
               **interleaved({"knn_default": lambda v: knn(v),
                              f"knn_ef{args.ef_high}": lambda v: knn(v, args.ef_high)}, qs, args.min_queries)}
        mem["after_queries"] = rss(server)
        got_default = [knn(v) for v in qs]
        got_high = [knn(v, args.ef_high) for v in qs]
        client.close()
    finally:
        server.stop()
    exact_ids = [[f"s{i}" for i in row] for row in exact_topk(matrix, q_vecs, K)]
    np_lat = in_process(lambda: timed(exact_search_fn(matrix), qs, args.min_queries))
    recall = {"default": recall_at_k(got_default, exact_ids, K),
              f"ef{args.ef_high}": recall_at_k(got_high, exact_ids, K)}
    print(f"  kNN median {lat['knn_default']['median']:.2f} ms (recall@10 {recall['default']['mean']:.3f}); "
          f"efSearch {args.ef_high}: {lat[f'knn_ef{args.ef_high}']['median']:.2f} ms "
          f"(recall@10 {recall[f'ef{args.ef_high}']['mean']:.3f}); numpy exact {np_lat['median']:.2f} ms", flush=True)
    return {"n_docs": n, "dim": int(base.shape[1]), "sigma": args.sigma, "base": f"{args.synthetic_base} all-MiniLM-L6-v2 document vectors",
            "queries": f"{args.synthetic_base} judged queries (all-MiniLM-L6-v2)", "batch": args.batch,
            "ingest_s": ingest_s, "ingest_vectors_per_s": n / ingest_s, "vector_build_s": build_s,
            "latency_ms": lat, "memory_mb": mem, "ann_recall": recall,
            "reference_latency_ms": {"numpy_exact": np_lat},
            "side_by_side": {"knn_default": {"arcadedb_http_qps": lat["knn_default"]["qps"],
                                             "numpy_exact_qps": np_lat["qps"],
                                             "ratio_numpy_over_arcadedb": _ratio(np_lat["qps"],
                                                                                 lat["knn_default"]["qps"]),
                                             "recall@10": recall["default"]["mean"]},
                             f"knn_ef{args.ef_high}": {
                                 "arcadedb_http_qps": lat[f"knn_ef{args.ef_high}"]["qps"],
                                 "numpy_exact_qps": np_lat["qps"],
                                 "ratio_numpy_over_arcadedb": _ratio(np_lat["qps"], lat[f"knn_ef{args.ef_high}"]["qps"]),
                                 "recall@10": recall[f"ef{args.ef_high}"]["mean"]}},
            "load_average": load_average()}


# -- fits ---------------------------------------------------------------------------------------

def fits(real: dict, synthetic: dict) -> dict:
    names = list(real)
    n = [real[k]["n_docs"] for k in names]
    out = {"x": "number of documents (log10)", "y": "cost (log10)",
           "note": "slope 1 = cost grows linearly with the corpus, 0 = flat; the real collections differ "
                   "in document length too (see n_tokens)"}

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


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    vec = Vectors()
    real = {name: real_stage(name, args, vec) for name in args.names}

    synthetic, skipped = {}, {}
    if args.synthetic_sizes:
        seed_c = load_collection(args.synthetic_base, mirror=args.mirror)
        base = vec.documents(MODEL, [d.text for d in seed_c.documents], args.synthetic_base)
        q_vecs = vec.query_vectors(MODEL, [q.query for q in seed_c.queries if q.relevant_ids],
                                   args.synthetic_base)
        for n in args.synthetic_sizes:
            synthetic[str(n)] = synthetic_stage(n, base, q_vecs, args)
        large = args.synthetic_large
        top = args.synthetic_sizes[-1]
        if large and large > top:
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
            heap_gb = _heap_gb(args.heap)
            raw_gb = large * base.shape[1] * 4 / 1e9
            if est > args.budget_s:
                skipped[str(large)] = {
                    "reason": (f"extrapolated ingest {est_ingest:.0f} s + graph build {est_build:.0f} s = "
                               f"{est / 60:.1f} min exceeds the {args.budget_s / 60:.0f}-minute budget "
                               f"(from {top} vectors: ingest {first['ingest_s']:.0f} s, linear; "
                               f"build {first['vector_build_s']:.0f} s, slope {build_slope:.2f} = max(1, fitted "
                               f"{(measured_slope or float('nan')):.2f}); the server's RSS was already "
                               f"{(first['memory_mb']['after_build'] or {}).get('rss_mb')} MB at {top} vectors "
                               f"with a {args.heap} heap)"),
                    "estimated_ingest_s": est_ingest, "estimated_build_s": est_build,
                    "fitted_build_slope": measured_slope, "assumed_build_slope": build_slope,
                    "raw_float32_gb": raw_gb, "heap_gb": heap_gb}
                print(f"== synthetic {large}: skipped ({skipped[str(large)]['reason']})", flush=True)
            else:
                synthetic[str(large)] = synthetic_stage(large, base, q_vecs, args)

    results = {
        "study": "standard_collections/scaling",
        "title": "ArcadeDB index and query cost as the corpus grows",
        "provenance": {
            "engine": {"name": "ArcadeDB", "package": f"arcadedb-embedded {package_version()}",
                       "mode": "embedded server over HTTP on 127.0.0.1, a fresh server per stage",
                       "heap": args.heap,
                       "text_index": "FULL_TEXT, StandardAnalyzer, BM25 k1=1.2 b=0.75 (defaults)",
                       "vector_index": "LSM_VECTOR, COSINE, INT8 quantization, other settings default",
                       "efsearch": EF_FINDINGS},
            "model": vec.encoder(MODEL).provenance(),
            "parameters": {"sizes": args.names, "k": K, "min_timed_queries": args.min_queries,
                           "warmup_calls": 5, "synthetic": args.synthetic_sizes,
                           "synthetic_large": args.synthetic_large, "budget_s": args.budget_s,
                           "sigma": args.sigma, "ef_high": args.ef_high, "ingest_batch_real": 200,
                           "ingest_batch_synthetic": args.batch,
                           "memory": "VmRSS / VmHWM of the server's Java process from /proc/<pid>/status",
                           "timing": "wall clock per call (time.perf_counter), HTTP round trip included",
                           "in_process_threads": "bm25s and numpy timed with BLAS limited to 1 thread "
                                                 "(threadpoolctl); the server uses its own threads",
                           "synthetic_base": args.synthetic_base},
            "git": git_state(), "date": now_iso(), "machine": {**machine(), "load_average_start": load_average()},
        },
        "real": real,
        "synthetic": synthetic,
        "skipped": skipped,
        "fits": fits(real, synthetic),
        "timings": {"wall_s": round(time.perf_counter() - started, 2)},
    }
    atomic_write_json(args.out / "scaling.json", results)
    print(f"scaling.json written in {results['timings']['wall_s']} s", flush=True)
    return 0


def _heap_gb(heap: str) -> float | None:
    try:
        unit = heap[-1].lower()
        return float(heap[:-1]) * {"g": 1, "m": 1 / 1024}[unit]
    except (ValueError, KeyError, IndexError):
        return None


if __name__ == "__main__":
    run_main(main)
