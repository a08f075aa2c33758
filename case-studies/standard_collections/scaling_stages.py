"""The two measured stages of ``bench_scaling.py``: a real collection and a synthetic vector set,
each on a freshly started embedded ArcadeDB server, next to the in-process references
(bm25s, exact numpy search) timed on the same queries. What the peers' vector benchmark shares
with them (server, schema, ingest, timing) is in :mod:`gabarito.measure.synthetic_vectors` and
:mod:`gabarito.measure.timing`."""

from __future__ import annotations

import time

import numpy as np

from gabarito.inputs.collections import load_collection
from gabarito.measure.parity import BM25Reference
from gabarito.measure.scaling import exact_topk, recall_at_k
from gabarito.measure.synthetic_vectors import (K, MODEL, fresh_database, ingest_synthetic, knn_sql, rss,
                                                start_server)
from gabarito.measure.timing import in_process, interleaved, load_average, timed
from gabarito.retrieval.arcadedb import ArcadeClient, ArcadeIndex, ArcadeServer
from gabarito.retrieval.models.collection_vectors import MODELS, Vectors
from gabarito.study.runner import say


def exact_search_fn(matrix: np.ndarray):
    def search(v):
        sims = matrix @ v
        part = np.argpartition(-sims, K - 1)[:K] if K < sims.size else np.arange(sims.size)
        return part[np.lexsort((part, -sims[part]))]
    return search


# -- stage 1: real collections ------------------------------------------------------------------

def real_stage(name: str, args, vec: Vectors) -> dict:
    c = load_collection(name, mirror=args.mirror)
    judged = c.judged_queries()
    docs = [{"doc_id": d.id, "text": d.text} for d in c.documents]
    doc_vecs = vec.documents(MODEL, [d.text for d in c.documents], name)
    q_vecs = vec.query_vectors(MODEL, [q.query for q in judged], name)
    n_tokens = sum(len(d.text.split()) for d in c.documents)
    say(f"== {name}: {len(docs)} documents, {len(judged)} queries")
    root = args.db_root / name
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
    say(f"  ingest {ingest_s:.1f} s, build {build_s:.2f} s, BM25 median {lat['bm25']['median']:.2f} ms, "
        f"kNN median {lat['knn']['median']:.2f} ms, recall@10 {out['ann_recall']['mean']:.3f}, "
        f"RSS {mem['after_build']}")
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


def synthetic_queries(client: ArcadeClient, index_name: str, server: ArcadeServer, q_vecs: np.ndarray,
                      args, mem: dict) -> dict:
    """Graph build (first query), latencies of both search breadths, and their top-k lists."""
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
    qs = list(q_vecs)
    for v in qs:  # one untimed pass of both settings first, so neither is timed on a colder JVM
        knn(v)
        knn(v, args.ef_high)
    lat = {"http_floor": timed(lambda _: client.query("SELECT 1 AS one"), qs, args.min_queries),
           **interleaved({"knn_default": lambda v: knn(v),
                          f"knn_ef{args.ef_high}": lambda v: knn(v, args.ef_high)}, qs, args.min_queries)}
    mem["after_queries"] = rss(server)
    return {"build_s": build_s, "latency_ms": lat, "default": [knn(v) for v in qs],
            f"ef{args.ef_high}": [knn(v, args.ef_high) for v in qs]}


def synthetic_stage(n: int, base: np.ndarray, q_vecs: np.ndarray, args, seed: int) -> dict:
    say(f"== synthetic: {n} vectors ({base.shape[0]} {args.synthetic_base} MiniLM vectors + noise "
        f"sigma={args.sigma})")
    server = start_server(args.db_root / f"synthetic_{n}", args.heap)
    matrix = np.empty((n, base.shape[1]), dtype=np.float32)
    try:
        mem = {"idle": rss(server)}
        client, index_name = fresh_database(server, f"scale_synthetic_{n}", int(base.shape[1]), timeout=600)
        ingest_s = ingest_synthetic(client, base, matrix, args, seed)
        mem["after_ingest"] = rss(server)
        got = synthetic_queries(client, index_name, server, q_vecs, args, mem)
        say(f"  ingest {ingest_s:.1f} s, graph build (first query) {got['build_s']:.1f} s, RSS {mem['after_build']}")
        client.close()
    finally:
        server.stop()
    exact_ids = [[f"s{i}" for i in row] for row in exact_topk(matrix, q_vecs, K)]
    np_lat = in_process(lambda: timed(exact_search_fn(matrix), list(q_vecs), args.min_queries))
    high = f"ef{args.ef_high}"
    recall = {setting: recall_at_k(got[setting], exact_ids, K) for setting in ("default", high)}
    lat = got["latency_ms"]
    say(f"  kNN median {lat['knn_default']['median']:.2f} ms (recall@10 {recall['default']['mean']:.3f}); "
        f"efSearch {args.ef_high}: {lat[f'knn_{high}']['median']:.2f} ms "
        f"(recall@10 {recall[high]['mean']:.3f}); numpy exact {np_lat['median']:.2f} ms")
    side = {f"knn_{setting}": {"arcadedb_http_qps": lat[f"knn_{setting}"]["qps"], "numpy_exact_qps": np_lat["qps"],
                               "ratio_numpy_over_arcadedb": _ratio(np_lat["qps"], lat[f"knn_{setting}"]["qps"]),
                               "recall@10": recall[setting]["mean"]} for setting in ("default", high)}
    return {"n_docs": n, "dim": int(base.shape[1]), "sigma": args.sigma,
            "base": f"{args.synthetic_base} all-MiniLM-L6-v2 document vectors",
            "queries": f"{args.synthetic_base} judged queries (all-MiniLM-L6-v2)", "batch": args.batch,
            "ingest_s": ingest_s, "ingest_vectors_per_s": n / ingest_s, "vector_build_s": got["build_s"],
            "latency_ms": lat, "memory_mb": mem, "ann_recall": recall,
            "reference_latency_ms": {"numpy_exact": np_lat}, "side_by_side": side,
            "load_average": load_average()}
