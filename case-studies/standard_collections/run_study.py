"""BM25, dense retrieval and RRF on the five classic test collections, with paired statistics
and a BM25 parity check of ArcadeDB against bm25s.

For each collection (ADI, Cranfield, CISI, MEDLINE, NPL) the judged queries are searched to
depth 100 by:

* ``bm25_arcadedb_standard`` / ``bm25_arcadedb_english``: ArcadeDB's FULL_TEXT index (its own
  BM25, k1 = 1.2, b = 0.75) with Lucene's StandardAnalyzer / EnglishAnalyzer, over HTTP;
* ``bm25s``: bm25s in process, matched to the standard analyzer (Lucene-like tokens, same
  k1/b and idf, distinct query terms): the independent reference of the parity check;
* ``dense_minilm`` / ``dense_mpnet``: exact cosine search in memory (numpy) over
  all-MiniLM-L6-v2 / all-mpnet-base-v2 vectors;
* ``dense_mpnet_arcadedb``: the same mpnet vectors searched through ArcadeDB's LSM_VECTOR
  (approximate, INT8) index, so the database's ANN is measured too (recall vs exact reported);
* ``rrf_minilm`` / ``rrf_mpnet``: RRF (k = 60, depth 100) of the better ArcadeDB BM25 (by mean
  nDCG@10 on the collection) and the exact dense run.

Queries without any relevant judgment are excluded and counted. The qrels as loaded are
written to ``qrels/<collection>.txt`` (committed); their sha256 is the results' gold hash,
and a qrels file that no longer matches what the loader reads stops the run
(``--update-qrels`` rewrites it on purpose).

    python case-studies/standard_collections/run_study.py                      # all five
    python case-studies/standard_collections/run_study.py --collections adi     # fast
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from embeddings import MODELS, Vectors

from gabarito.retrieval import fusion
from gabarito.measure import metrics
from gabarito.measure import stats
from gabarito.study import assemble as study
from gabarito.inputs.collections import COLLECTIONS, load_collection
from gabarito.inputs.datasets import fetch, load_manifest
from gabarito.retrieval.arcadedb import ArcadeClient, ArcadeIndex, analyzer_class, connect
from gabarito.retrieval.memory import ExactVectors
from gabarito.errors import GabaritoError, run_main
from gabarito.hashing import atomic_write_text, sha256_file
from gabarito.retrieval.models import cache_dir
from gabarito.measure.parity import ARCADEDB_BM25_B, ARCADEDB_BM25_K1, BM25Reference, parity
from gabarito.study.records import provenance, write_results, write_trec_run

ORDER = ("adi", "cranfield", "cisi", "medline", "npl")
MEASURES = ("nDCG@10", "AP@100", "R@100", "RR@10", "P@10")
TESTED = ("nDCG@10", "AP@100")
TYPES = {"standard": ("DocStandard", None), "english": ("DocEnglish", "english")}
ANN_MODEL = "mpnet"
SEED = 20260817

METHODS = {
    "bm25_arcadedb_standard": "ArcadeDB FULL_TEXT BM25, Lucene StandardAnalyzer (lower case, no stemming, "
                              "no stop words), k1=1.2 b=0.75, over HTTP",
    "bm25_arcadedb_english": "ArcadeDB FULL_TEXT BM25, Lucene EnglishAnalyzer (possessives, lower case, "
                             "English stop words, Porter stemming), k1=1.2 b=0.75, over HTTP",
    "bm25s": "bm25s (in process) matched to the standard analyzer: Lucene-like UAX#29 tokens, lower case, "
             "no stop words, no stemming, method='lucene', k1=1.2 b=0.75, distinct query terms",
    "dense_minilm": "all-MiniLM-L6-v2, exact cosine over all documents in memory (numpy)",
    "dense_mpnet": "all-mpnet-base-v2, exact cosine over all documents in memory (numpy)",
    "dense_mpnet_arcadedb": "all-mpnet-base-v2 through ArcadeDB's LSM_VECTOR index (approximate kNN, "
                            "COSINE, INT8 quantization, default graph and efSearch settings)",
    "rrf_minilm": "RRF (k=60, depth 100) of the better ArcadeDB BM25 and dense_minilm",
    "rrf_mpnet": "RRF (k=60, depth 100) of the better ArcadeDB BM25 and dense_mpnet",
}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--collections", default=",".join(ORDER),
                    help=f"comma-separated subset of {', '.join(ORDER)} (ADI is the fast one)")
    ap.add_argument("--mirror", help="local dataset mirror (or $GABARITO_DATA_MIRROR)")
    ap.add_argument("--arcadedb-url", default=os.environ.get("GABARITO_ARCADEDB_URL"),
                    help="use this ArcadeDB server instead of starting the embedded one")
    ap.add_argument("--db-dir", type=Path, default=cache_dir() / "arcadedb-standard_collections",
                    help="root folder of the embedded server (one database per collection)")
    ap.add_argument("--depth", type=int, default=100, help="documents retrieved per query")
    ap.add_argument("--rrf-k", type=int, default=60)
    ap.add_argument("--resamples", type=int, default=10000, help="bootstrap / randomization resamples")
    ap.add_argument("--parity-tolerance", type=float, default=0.005,
                    help="largest |nDCG@10 difference| between ArcadeDB BM25 and bm25s counted as parity")
    ap.add_argument("--rebuild", action="store_true", help="drop and rebuild the ArcadeDB databases")
    ap.add_argument("--update-qrels", action="store_true",
                    help="rewrite qrels/<collection>.txt when the loader's qrels differ from it")
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    args.names = [n.strip().lower() for n in args.collections.split(",") if n.strip()]
    unknown = [n for n in args.names if n not in COLLECTIONS]
    if unknown or not args.names:
        ap.error(f"unknown collection(s) {unknown}; known: {', '.join(ORDER)}")
    if args.depth < 10:
        ap.error("--depth must be at least 10 (the top-10 measures need it)")
    return args


# -- inputs -------------------------------------------------------------------------------------

def qrels_text(qrels) -> str:
    return "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())


def freeze_qrels(collection, out: Path, update: bool) -> tuple[str, str]:
    """Write (first time) or check ``qrels/<name>.txt``; returns (relative path, sha256)."""
    rel = f"qrels/{collection.name}.txt"
    path = out / rel
    text = qrels_text(collection.qrels)
    if path.exists() and path.read_text(encoding="utf-8") != text:
        if not update:
            raise GabaritoError("the qrels read from the collection differ from the committed file; "
                                "rerun with --update-qrels if the change is intended", path=path)
        print(f"  {rel}: rewritten (--update-qrels)", flush=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        atomic_write_text(path, text)
    return rel, sha256_file(path)


def corpus_sha256(collection) -> str:
    """Content hash of the documents as indexed: ids and texts, in order."""
    h = hashlib.sha256()
    for d in collection.documents:
        h.update(json.dumps([d.id, d.text], ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def source_files(name: str, mirror) -> dict[str, str]:
    folder = fetch(name, mirror=mirror)
    return {f: sha256_file(folder / f) for f in load_manifest()[name]["files"]}


# -- ArcadeDB -----------------------------------------------------------------------------------

def open_index(client: ArcadeClient, kind: str, collection, vectors: np.ndarray, *, model_prov: dict,
               corpus_sha: str, vectors_sha: str) -> tuple[ArcadeIndex, str, float]:
    """The collection's index of this analyzer, reused when it holds the same corpus and vectors."""
    type_name, analyzer = TYPES[kind]
    index = ArcadeIndex(client, type_name)
    want = {"corpus_sha256": corpus_sha, "vectors_sha256": vectors_sha,
            "model_weights_sha256": model_prov["weights_sha256"]}
    if index.exists():
        info = index.info()
        if (all(info.get(k) == v for k, v in want.items()) and info.get("model_id") == model_prov["model_id"]
                and info.get("analyzer") == analyzer_class(analyzer)
                and index.count() == len(collection.documents)):
            return index, "reused", 0.0
        index.drop()
    t0 = time.perf_counter()
    index.create(["text"], int(vectors.shape[1]), model_prov["model_id"],
                 extra={**want, "collection": collection.name}, analyzer=analyzer)
    docs = [{"doc_id": d.id, "text": d.text} for d in collection.documents]
    index.ingest(docs, vectors, batch_size=200, progress=False)
    return index, "built", time.perf_counter() - t0


def full_text_settings(client: ArcadeClient, index: ArcadeIndex) -> dict:
    """What the server reports about the FULL_TEXT index (k1/b when it exposes them)."""
    name = index.info()["text_index"]
    try:
        rows = client.query("SELECT FROM schema:indexes WHERE name = :n", {"n": name})
    except GabaritoError as exc:
        return {"error": str(exc)}
    row = rows[0] if rows else {}
    keep = {}
    for key, value in row.items():
        if any(s in key.lower() for s in ("bm25", "analyzer", "similarity", "type", "properties", "metadata")):
            keep[key] = value
    return keep


# -- evaluation ---------------------------------------------------------------------------------

def evaluate_runs(runs: dict, qrels: dict, judged: list[str], resamples: int) -> dict:
    per_query = {}
    for method, run in runs.items():
        ev = metrics.evaluate(run, qrels, MEASURES)
        if sorted(ev[MEASURES[0]]) != sorted(judged):
            raise GabaritoError(f"{method}: evaluated queries differ from the judged ones")
        per_query[method] = {m: dict(ev[m]) for m in MEASURES}
    qids = sorted(judged)
    means = {m: {meas: metrics.mean(per_query[m][meas]) for meas in MEASURES} for m in runs}
    ci = {m: {meas: list(stats.bootstrap_ci([per_query[m][meas][q] for q in qids],
                                            n_resamples=resamples, seed=SEED)) for meas in MEASURES}
          for m in runs}
    tests, significant = {}, {}
    for meas in TESTED:
        rows = stats.compare_methods({m: per_query[m][meas] for m in runs}, n_resamples=resamples, seed=SEED)
        tests[meas] = rows
        significant[meas] = [{"a": r["a"], "b": r["b"], "mean_diff": r["mean_diff"], "p_holm": r["p_holm"],
                              "dz": r["dz"]} for r in rows if r["p_holm"] < 0.05]
    return {"metrics": means, "ci95": ci, "tests": tests, "significant_after_holm": significant,
            "per_query": per_query}


def main(argv=None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    depth = args.depth
    vec = Vectors()
    results_by_collection, gold, corpus_prov, parity_summary = {}, {}, {}, {}
    index_state, engine = {}, {}

    loaded = {}
    for name in args.names:  # gold first: every qrels file is checked before anything is searched
        t0 = time.perf_counter()
        c = load_collection(name, mirror=args.mirror)
        rel, sha = freeze_qrels(c, args.out, args.update_qrels)
        gold[rel] = sha
        loaded[name] = (c, time.perf_counter() - t0)

    with connect(args.arcadedb_url, root_dir=args.db_dir, database=f"stdcoll_{args.names[0]}",
                 heap="2g") as conn:
        user, password = conn.client.session.auth
        engine = {"name": "ArcadeDB", "version": conn.client.server_version(),
                  "mode": "external" if conn.server is None else "embedded (arcadedb-embedded, HTTP server)",
                  "bm25_k1": ARCADEDB_BM25_K1, "bm25_b": ARCADEDB_BM25_B,
                  "bm25_source": ("ArcadeDB defaults FullTextIndexMetadata.DEFAULT_BM25_K1/DEFAULT_BM25_B "
                                  "(FULL_TEXT METADATA keys bm25_k1, bm25_b; not overridden here)"),
                  "analyzers": {k: analyzer_class(a) or "org.apache.lucene.analysis.standard.StandardAnalyzer"
                                for k, (_, a) in TYPES.items()},
                  "vector_index": "LSM_VECTOR COSINE INT8, default maxConnections/beamWidth/efSearch",
                  "databases": {}}
        for name in args.names:
            c, load_s = loaded[name]
            print(f"== {name}: {len(c.documents)} documents, {len(c.queries)} queries "
                  f"({len(c.unjudged)} without relevant judgments, excluded)", flush=True)
            phases = {"load_s": round(load_s, 3)}
            judged = [q for q in c.queries if q.relevant_ids]
            judged_ids = [q.id for q in judged]
            doc_ids = [d.id for d in c.documents]
            texts = [d.text for d in c.documents]

            t0 = time.perf_counter()
            doc_vecs = {k: vec.documents(k, texts, name) for k in MODELS}
            q_vecs = {k: vec.query_vectors(k, [q.query for q in judged], name) for k in MODELS}
            phases["encode_s"] = round(time.perf_counter() - t0, 3)
            model_prov = {k: vec.encoder(k).provenance() for k in MODELS}
            csha = corpus_sha256(c)
            vsha = hashlib.sha256(np.ascontiguousarray(doc_vecs[ANN_MODEL]).tobytes()).hexdigest()
            corpus_prov[name] = {"name": name, "files_sha256": source_files(name, args.mirror),
                                 "corpus_sha256": csha, "n_docs": len(c.documents),
                                 "n_queries": len(c.queries), "text_fields": c.text_fields,
                                 "mpnet_vectors_sha256": vsha}

            database = f"stdcoll_{name}"
            client = ArcadeClient(conn.client.url, user, password, database)
            if args.rebuild and client.database_exists():
                client.drop_database()
            if not client.database_exists():
                client.create_database()
            t0 = time.perf_counter()
            indexes, states = {}, {}
            for kind in TYPES:
                indexes[kind], states[kind], built_s = open_index(
                    client, kind, c, doc_vecs[ANN_MODEL], model_prov=model_prov[ANN_MODEL],
                    corpus_sha=csha, vectors_sha=vsha)
                states[f"{kind}_build_s"] = round(built_s, 3)
            phases["index_s"] = round(time.perf_counter() - t0, 3)
            index_state[name] = states
            t0 = time.perf_counter()
            graph_s = indexes["standard"].warm_up(q_vecs[ANN_MODEL][0])
            phases["vector_warm_up_s"] = round(time.perf_counter() - t0, 3)
            engine["databases"][name] = {"database": database, "index_state": states,
                                         "vector_graph_build_s": round(graph_s, 3),
                                         "full_text_index": full_text_settings(client, indexes["standard"])}

            t0 = time.perf_counter()
            runs = {}
            for kind in TYPES:
                runs[f"bm25_arcadedb_{kind}"] = {q.id: indexes[kind].bm25(q.query, depth) for q in judged}
            phases["bm25_arcadedb_s"] = round(time.perf_counter() - t0, 3)
            t0 = time.perf_counter()
            ref = BM25Reference(dict(zip(doc_ids, texts)), k1=ARCADEDB_BM25_K1, b=ARCADEDB_BM25_B)
            runs["bm25s"] = {q.id: ref.search(q.query, depth) for q in judged}
            phases["bm25s_s"] = round(time.perf_counter() - t0, 3)
            t0 = time.perf_counter()
            for k in MODELS:
                exact = ExactVectors(doc_ids, doc_vecs[k], model_id=MODELS[k])
                runs[f"dense_{k}"] = {q.id: exact.knn(v, depth) for q, v in zip(judged, q_vecs[k])}
            phases["dense_exact_s"] = round(time.perf_counter() - t0, 3)
            t0 = time.perf_counter()
            runs["dense_mpnet_arcadedb"] = {q.id: indexes["standard"].knn(v, depth, model_id=MODELS[ANN_MODEL])
                                            for q, v in zip(judged, q_vecs[ANN_MODEL])}
            phases["dense_arcadedb_s"] = round(time.perf_counter() - t0, 3)
            client.close()

            # RRF input: the better ArcadeDB BM25 on this collection, by mean nDCG@10
            ndcg = {m: metrics.mean(metrics.evaluate(runs[m], c.qrels, ["nDCG@10"])["nDCG@10"])
                    for m in ("bm25_arcadedb_standard", "bm25_arcadedb_english")}
            better = max(ndcg, key=lambda m: (ndcg[m], m == "bm25_arcadedb_standard"))
            for k in MODELS:
                runs[f"rrf_{k}"] = study.fuse_runs([runs[better], runs[f"dense_{k}"]], k=args.rrf_k, depth=depth)
            runs = {m: runs[m] for m in METHODS}

            t0 = time.perf_counter()
            scored = evaluate_runs(runs, c.qrels, judged_ids, args.resamples)
            phases["statistics_s"] = round(time.perf_counter() - t0, 3)
            par = parity(runs["bm25_arcadedb_standard"], runs["bm25s"],
                         scored["per_query"]["bm25_arcadedb_standard"]["nDCG@10"],
                         scored["per_query"]["bm25s"]["nDCG@10"], k=10, tolerance=args.parity_tolerance)
            parity_summary[name] = {k: par[k] for k in ("mean_jaccard", "mean_overlap", "identical_topk_share",
                                                        "ndcg_diff", "target_met")}
            ann = {f"recall@{k}": study.ann_recall(runs["dense_mpnet_arcadedb"], runs["dense_mpnet"], k=k)
                   for k in (10, depth)}
            for method, run in runs.items():
                write_trec_run(args.out / "runs" / f"{name}.{method}.trec", run, tag=f"gabarito-{method}")
            graded = any(g > 1 for docs in c.qrels.values() for g in docs.values())
            results_by_collection[name] = {
                "n_documents": len(c.documents),
                "n_queries": len(c.queries),
                "n_judged": len(judged),
                "excluded": {"count": len(c.unjudged), "ids": list(c.unjudged),
                             "reason": "no document judged relevant (grade >= 1)"},
                "qrels_file": f"qrels/{name}.txt",
                "graded": graded,
                "gain": "graded (Cranfield grades 1-4 as gain)" if graded else "binary",
                "notes": c.notes,
                "rrf_bm25_input": {"chosen": better, "ndcg@10": ndcg,
                                   "rule": "higher mean nDCG@10 on this collection's judged queries "
                                           "(chosen on the evaluation queries themselves)"},
                "metrics": scored["metrics"],
                "ci95": scored["ci95"],
                "tests": scored["tests"],
                "significant_after_holm": scored["significant_after_holm"],
                "parity": par,
                "ann": ann,
                "timings_s": phases,
                "per_query": scored["per_query"],
            }
            line = ", ".join(f"{m} {scored['metrics'][m]['nDCG@10']:.3f}" for m in runs)
            print(f"  nDCG@10: {line}", flush=True)
            print(f"  parity: Jaccard@10 {par['mean_jaccard']:.4f}, identical {par['identical_topk']}/"
                  f"{par['n_queries']}, nDCG@10 diff {par['ndcg_diff']:+.5f} "
                  f"({'met' if par['target_met'] else 'NOT met'}); ANN recall@10 {ann['recall@10']['mean']:.3f}",
                  flush=True)

    wall = round(time.perf_counter() - started, 2)
    results = {
        "study": "standard_collections",
        "title": "BM25, dense retrieval and RRF on ADI, Cranfield, CISI, MEDLINE and NPL",
        "provenance": provenance(
            corpus={"collections": corpus_prov},
            gold_sha256=gold,
            model={k: vec.encoder(k).provenance() for k in MODELS},
            engine={**engine, "bm25s_version": _bm25s_version(),
                    "dense_exact": "numpy dot product over L2-normalised float32 vectors (gabarito ExactVectors)"},
            parameters={"collections": args.names, "depth": depth, "rrf_k": args.rrf_k, "rrf_depth": depth,
                        "measures": list(MEASURES), "tested_measures": list(TESTED),
                        "bootstrap_resamples": args.resamples, "seed": SEED, "alpha": 0.05,
                        "multiple_comparisons": "Holm over all method pairs, per collection and measure",
                        "parity_tolerance_ndcg@10": args.parity_tolerance,
                        "ann_model": MODELS[ANN_MODEL], "text_field": "text = Document.text (see notes)",
                        "ties": "score descending, then doc id ascending",
                        "query_encoding": "query texts as loaded, no prefix (neither model uses one)"},
        ),
        "methods": METHODS,
        "measures": list(MEASURES),
        "collections": results_by_collection,
        "parity_summary": {**parity_summary,
                           "all_met": all(p["target_met"] for p in parity_summary.values())},
        "rrf_python": inspect.getsource(fusion.rrf),
        "timings": {"wall_s": wall, "embedding_cache": vec.report},
    }
    write_results(args.out / "results.json", results)
    print(f"results.json written in {wall} s; parity "
          f"{'met' if results['parity_summary']['all_met'] else 'NOT met'} on every collection", flush=True)
    return 0


def _bm25s_version() -> str:
    try:
        from importlib.metadata import version

        return version("bm25s")
    except Exception:  # noqa: BLE001 - provenance only
        return "unknown"


if __name__ == "__main__":
    run_main(main)
