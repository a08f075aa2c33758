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
* ``rrf_minilm`` / ``rrf_mpnet``: RRF (rrf_k = 60, depth 100) of the better ArcadeDB BM25 (by
  mean nDCG@10 on the collection) and the exact dense run.

Queries without any relevant judgment are excluded and counted. The judgments are the frozen
``qrels/<collection>.txt`` files (``gold.lock.json``): the runner checks the lock, and the
study stops before any search when the collection's loader reads other judgments than the
frozen file. ``--cold`` drops the collections' ArcadeDB databases first (the vector cache,
shared with ``bench_scaling.py``, is kept: see ``embeddings.py``).

    gabarito study standard_collections                          # all five
    gabarito study standard_collections --collections adi        # fast
"""

from __future__ import annotations

import inspect
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_bytes, sha256_file
from gabarito.inputs.collections import COLLECTIONS
from gabarito.inputs.collections.registry import ORDER, content_sha256, load_frozen
from gabarito.inputs.datasets import fetch, load_manifest
from gabarito.measure import metrics
from gabarito.measure.parity import ARCADEDB_BM25_B, ARCADEDB_BM25_K1, BM25Reference, parity
from gabarito.notes import note
from gabarito.core.runs import Qrels
from gabarito.measure.scaling import run_recall_at_k
from gabarito.measure.score import score_runs
from gabarito.measure.stats import ALPHA
from gabarito.retrieval import fusion
from gabarito.retrieval.arcadedb import ArcadeClient, ArcadeIndex, analyzer_class
from gabarito.retrieval.memory import ExactVectors
from gabarito.retrieval.models.collection_vectors import MODELS, Vectors
from gabarito.retrieval.pipeline import RRF
from gabarito.retrieval.protocol import Queries, TextRetriever, VectorRetriever
from gabarito.retrieval.reuse import index_key, open_or_build
from gabarito.study.runner import say, study_main

TITLE = "BM25, dense retrieval and RRF on ADI, Cranfield, CISI, MEDLINE and NPL"
MEASURES = ("nDCG@10", "AP@100", "R@100", "RR@10", "P@10")
TESTED = ("nDCG@10", "AP@100")
TYPES = {"standard": ("DocStandard", None), "english": ("DocEnglish", "english")}
STANDARD_ANALYZER = "org.apache.lucene.analysis.standard.StandardAnalyzer"
ANN_MODEL = "mpnet"


def methods(rrf_k: int, depth: int) -> dict[str, dict]:
    """What each method is, as notes (codes with fields), in the order the results keep them."""
    bm25 = {"k1": ARCADEDB_BM25_K1, "b": ARCADEDB_BM25_B}
    return {
        "bm25_arcadedb_standard": note("method.bm25_arcadedb_standard", **bm25),
        "bm25_arcadedb_english": note("method.bm25_arcadedb_english", **bm25),
        "bm25s": note("method.bm25s_matched", **bm25),
        **{f"dense_{k}": note("method.dense_exact", model=MODELS[k]) for k in MODELS},
        "dense_mpnet_arcadedb": note("method.dense_lsm_vector", model=MODELS[ANN_MODEL]),
        **{f"rrf_{k}": note("method.rrf_of_better_bm25", k=rrf_k, depth=depth, dense=f"dense_{k}")
           for k in MODELS},
    }


#: The methods' keys, in the order the results keep them.
METHODS = tuple(methods(60, 100))


def add_arguments(ap) -> None:
    ap.add_argument("--collections", default=",".join(ORDER),
                    help=f"comma-separated subset of {', '.join(ORDER)} (ADI is the fast one)")
    ap.add_argument("--depth", type=int, default=100, help="documents retrieved per query")
    ap.add_argument("--rrf-k", type=int, default=60, help="the RRF constant")
    ap.add_argument("--parity-tolerance", type=float, default=0.005,
                    help="largest |nDCG@10 difference| between ArcadeDB BM25 and bm25s counted as parity")


def chosen_collections(args) -> list[str]:
    names = [n.strip().lower() for n in args.collections.split(",") if n.strip()]
    unknown = [n for n in names if n not in COLLECTIONS]
    if unknown or not names:
        raise GabaritoError(f"unknown collection(s) {unknown}; known: {', '.join(ORDER)}")
    if args.depth < 10:
        raise GabaritoError("--depth must be at least 10 (the top-10 measures need it)")
    return names


# -- inputs -------------------------------------------------------------------------------------

def qrels_file(name: str) -> str:
    return f"qrels/{name}.txt"


def load_checked(ctx, name: str):
    """The collection, once its judgments are known to be the frozen ``qrels/<name>.txt``."""
    rel = qrels_file(name)
    if rel not in ctx.gold_sha256:
        raise GabaritoError(f"{rel} is not frozen in gold.lock.json", path=ctx.spec.dir / "gold.lock.json")
    return load_frozen(name, ctx.spec.dir / rel, mirror=ctx.mirror())[0]


def corpus_record(c, mirror, vectors_sha: str) -> dict:
    folder = fetch(c.name, mirror=mirror)
    return {"name": c.name, "files_sha256": {f: sha256_file(folder / f) for f in load_manifest()[c.name]["files"]},
            "corpus_sha256": content_sha256(c), "n_docs": len(c.documents), "n_queries": len(c.queries),
            "text_fields": c.text_fields, "mpnet_vectors_sha256": vectors_sha}


# -- ArcadeDB -----------------------------------------------------------------------------------

def engine_record(conn) -> dict:
    return {"name": "ArcadeDB", "version": conn.client.server_version(),
            "mode": note("engine.arcadedb_external") if conn.server is None else note("engine.arcadedb_embedded"),
            "bm25_k1": ARCADEDB_BM25_K1, "bm25_b": ARCADEDB_BM25_B,
            "bm25_source": ("ArcadeDB defaults FullTextIndexMetadata.DEFAULT_BM25_K1/DEFAULT_BM25_B "
                            "(FULL_TEXT METADATA keys bm25_k1, bm25_b; not overridden here)"),
            "analyzers": {k: analyzer_class(a) or STANDARD_ANALYZER for k, (_, a) in TYPES.items()},
            "vector_index": "LSM_VECTOR COSINE INT8, default maxConnections/beamWidth/efSearch",
            "databases": {}}


def collection_client(ctx, conn, name: str) -> ArcadeClient:
    """The collection's own database on the study's server (dropped first with ``--cold``)."""
    user, password = conn.client.session.auth
    client = ArcadeClient(conn.client.url, user, password, f"stdcoll_{name}")
    if ctx.args.cold and client.database_exists():
        client.drop_database()
    if not client.database_exists():
        client.create_database()
    return client


def open_indexes(ctx, client: ArcadeClient, c, vectors: np.ndarray, model: dict, corpus: dict) -> tuple[dict, dict, dict]:
    """One type per analyzer holding the texts and the ANN model's vectors, reused when current;
    the indexes, their states and their fingerprints."""
    rows = [{"doc_id": d.id, "text": d.text} for d in c.documents]
    indexes, states, fingerprints = {}, {}, {}
    for kind, (type_name, analyzer) in TYPES.items():
        indexes[kind] = ArcadeIndex(client, type_name)
        parts = {"collection": c.name, "corpus_sha256": corpus["corpus_sha256"],
                 "vectors_sha256": corpus["mpnet_vectors_sha256"], "model_id": model["model_id"],
                 "model_weights_sha256": model["weights_sha256"], "analyzer": analyzer_class(analyzer),
                 "dim": int(vectors.shape[1])}
        with ctx.phase(f"{c.name}/index_{kind}"):
            states[kind] = open_or_build(indexes[kind], parts, fields=["text"], rows=rows, vectors=vectors,
                                         model_id=model["model_id"], analyzer=analyzer)
        fingerprints[kind] = index_key(parts, vectors)
    return indexes, states, fingerprints


def full_text_settings(client: ArcadeClient, index: ArcadeIndex) -> dict:
    """What the server reports about the FULL_TEXT index (k1/b when it exposes them)."""
    name = index.info()["text_index"]
    try:
        rows = client.query("SELECT FROM schema:indexes WHERE name = :n", {"n": name})
    except GabaritoError as exc:
        return {"error": str(exc)}
    row = rows[0] if rows else {}
    wanted = ("bm25", "analyzer", "similarity", "type", "properties", "metadata")
    return {k: v for k, v in row.items() if any(s in k.lower() for s in wanted)}


# -- runs ---------------------------------------------------------------------------------------

def retrievers(c, indexes: dict, doc_vecs: dict, vec: Vectors) -> dict[str, list]:
    """The first-stage retrievers, grouped by the phase that times them."""
    doc_ids = [d.id for d in c.documents]
    ref = BM25Reference({d.id: d.text for d in c.documents}, k1=ARCADEDB_BM25_K1, b=ARCADEDB_BM25_B)
    ann = indexes["standard"]
    return {
        "bm25_arcadedb": [TextRetriever(f"bm25_arcadedb_{kind}", indexes[kind].bm25) for kind in TYPES],
        "bm25s": [TextRetriever("bm25s", ref.search, {"version": ref.version})],
        "dense_exact": [VectorRetriever(f"dense_{k}", ExactVectors(doc_ids, doc_vecs[k], model_id=MODELS[k]).knn,
                                        vec.encoder(k)) for k in MODELS],
        "dense_arcadedb": [VectorRetriever("dense_mpnet_arcadedb",
                                           lambda v, d: ann.knn(v, d, model_id=MODELS[ANN_MODEL]),
                                           vec.encoder(ANN_MODEL))],
    }


def search_all(ctx, name: str, stages: dict[str, list], queries: Queries, depth: int) -> dict:
    runs = {}
    for group, members in stages.items():
        with ctx.phase(f"{name}/{group}"):
            runs.update({r.name: r.search(queries, depth) for r in members})
    return runs


def add_fusion(runs: dict, qrels: Qrels, rrf_k: int, depth: int) -> dict:
    """RRF of the better ArcadeDB BM25 (by mean nDCG@10 here) with each exact dense run; returns
    the record of that choice."""
    ndcg = {m: metrics.mean(metrics.evaluate(runs[m], qrels, ["nDCG@10"])["nDCG@10"])
            for m in ("bm25_arcadedb_standard", "bm25_arcadedb_english")}
    better = max(ndcg, key=lambda m: (ndcg[m], m == "bm25_arcadedb_standard"))
    fuse = RRF(rrf_k=rrf_k)
    for k in MODELS:
        runs[f"rrf_{k}"] = fuse([runs[better], runs[f"dense_{k}"]], depth)
    return {"chosen": better, "ndcg@10": ndcg,
            "rule": note("collection.rrf_bm25_rule", measure="nDCG@10")}


def score(ctx, runs: dict, qrels: Qrels, judged: list[str]) -> dict:
    """Means, intervals, Holm-corrected paired tests and per-query values, keyed as the chapter reads them."""
    scored = score_runs(runs, qrels, MEASURES, tested=TESTED, resamples=ctx.resamples, seed=ctx.seed,
                        order=sorted(judged))
    significant = {m: [{k: r[k] for k in ("a", "b", "mean_diff", "p_holm", "dz")} for r in scored.tests
                       if r["measure"] == m and r["p_holm"] < ALPHA] for m in TESTED}
    return {**scored.to_dict(), "significant_after_holm": significant}


# -- one collection -----------------------------------------------------------------------------

def phase_times(ctx, name: str) -> dict:
    prefix = f"{name}/"
    return {k[len(prefix):] + "_s": v for k, v in ctx.phases.items() if k.startswith(prefix)}


def study_collection(ctx, conn, c, vec: Vectors, engine: dict, corpora: dict) -> dict:
    judged = c.judged_queries()
    say(f"== {c.name}: {len(c.documents)} documents, {len(c.queries)} queries "
        f"({len(c.unjudged)} without relevant judgments, excluded)")
    with ctx.phase(f"{c.name}/encode"):
        doc_vecs = {k: vec.documents(k, [d.text for d in c.documents], c.name) for k in MODELS}
        queries = Queries([q.id for q in judged], [q.query for q in judged],
                          {MODELS[k]: vec.query_vectors(k, [q.query for q in judged], c.name) for k in MODELS})
    model = vec.encoder(ANN_MODEL).provenance()
    ann_sha = sha256_bytes(np.ascontiguousarray(doc_vecs[ANN_MODEL]).tobytes())
    corpora[c.name] = corpus_record(c, ctx.mirror(), ann_sha)
    client = collection_client(ctx, conn, c.name)
    try:
        indexes, states, fingerprints = open_indexes(ctx, client, c, doc_vecs[ANN_MODEL], model, corpora[c.name])
        with ctx.phase(f"{c.name}/vector_warm_up"):
            graph_s = indexes["standard"].warm_up(queries.vectors(vec.encoder(ANN_MODEL))[0])
        engine["databases"][c.name] = {"database": client.database, "index_state": states,
                                       "index_fingerprint": fingerprints,
                                       "vector_graph_build_s": round(graph_s, 3),
                                       "full_text_index": full_text_settings(client, indexes["standard"])}
        with ctx.phase(f"{c.name}/in_process_indexes"):
            stages = retrievers(c, indexes, doc_vecs, vec)
        runs = search_all(ctx, c.name, stages, queries, ctx.args.depth)
    finally:
        client.close()
    qrels = Qrels(c.qrels)
    rrf_input = add_fusion(runs, qrels, ctx.args.rrf_k, ctx.args.depth)
    runs = {m: runs[m] for m in METHODS}
    with ctx.phase(f"{c.name}/statistics"):
        scored = score(ctx, runs, qrels, queries.ids)
    for method, run in runs.items():
        ctx.write_run(f"{c.name}.{method}", run, tag=f"gabarito-{method}")
    return collection_results(ctx, c, runs, scored, rrf_input)


def collection_results(ctx, c, runs: dict, scored: dict, rrf_input: dict) -> dict:
    ndcg = {m: scored["per_query"][m]["nDCG@10"] for m in ("bm25_arcadedb_standard", "bm25s")}
    par = parity(runs["bm25_arcadedb_standard"], runs["bm25s"], ndcg["bm25_arcadedb_standard"], ndcg["bm25s"],
                 k=10, tolerance=ctx.args.parity_tolerance)
    ann = {f"recall@{k}": run_recall_at_k(runs["dense_mpnet_arcadedb"], runs["dense_mpnet"], k)
           for k in (10, ctx.args.depth)}
    graded = any(g > 1 for docs in c.qrels.values() for g in docs.values())
    say("  nDCG@10: " + ", ".join(f"{m} {scored['metrics'][m]['nDCG@10']:.3f}" for m in runs))
    say(f"  parity: Jaccard@10 {par['mean_jaccard']:.4f}, identical {par['identical_topk']}/{par['n_queries']}, "
        f"nDCG@10 diff {par['ndcg_diff']:+.5f} ({'met' if par['target_met'] else 'NOT met'}); "
        f"ANN recall@10 {ann['recall@10']['mean']:.3f}")
    return {
        "n_documents": len(c.documents), "n_queries": len(c.queries), "n_judged": len(c.judged_queries()),
        "excluded": {"count": len(c.unjudged), "ids": list(c.unjudged),
                     "reason": note("collection.no_relevant_document")},
        "qrels_file": qrels_file(c.name), "graded": graded,
        "gain": note("collection.gain_graded", grades=[1, 4]) if graded else note("collection.gain_binary"),
        "notes": c.notes,
        "rrf_bm25_input": rrf_input,
        **scored, "parity": par, "ann": ann, "timings_s": phase_times(ctx, c.name),
    }


# -- the study ----------------------------------------------------------------------------------

def parameters(ctx, names: list[str]) -> dict:
    return {"collections": names, "depth": ctx.args.depth, "rrf_k": ctx.args.rrf_k, "rrf_depth": ctx.args.depth,
            "measures": list(MEASURES), "tested_measures": list(TESTED), "alpha": ALPHA,
            "multiple_comparisons": "Holm over all method pairs, per collection and measure",
            "parity_tolerance_ndcg@10": ctx.args.parity_tolerance,
            "ann_model": MODELS[ANN_MODEL], "text_field": note("collection.text_field"),
            "ties": note("ranking.ties_by_doc_id"),
            "query_encoding": "query texts as loaded, no prefix (neither model uses one)"}


def package(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


def run(ctx) -> dict:
    names = chosen_collections(ctx.args)
    with ctx.phase("gold"):  # every collection's judgments checked before anything is searched
        loaded = {name: load_checked(ctx, name) for name in names}
    vec = Vectors(device=ctx.device)
    by_collection, corpora = {}, {}
    with ctx.arcadedb(f"stdcoll_{names[0]}", heap="2g") as conn:
        engine = engine_record(conn)
        for name in names:
            by_collection[name] = study_collection(ctx, conn, loaded[name], vec, engine, corpora)
    parity_summary = {name: {k: r["parity"][k] for k in ("mean_jaccard", "mean_overlap", "identical_topk_share",
                                                         "ndcg_diff", "target_met")}
                      for name, r in by_collection.items()}
    parity_summary["all_met"] = all(p["target_met"] for p in parity_summary.values())
    ctx.gold_sha256 = {rel: sha for rel, sha in ctx.gold_sha256.items() if rel in {qrels_file(n) for n in names}}
    say(f"parity {'met' if parity_summary['all_met'] else 'NOT met'} on every collection")
    return {
        "title": TITLE,
        "provenance": ctx.provenance(
            corpus={"collections": corpora}, model={k: vec.encoder(k).provenance() for k in MODELS},
            engine={**engine, "bm25s_version": package("bm25s"),
                    "dense_exact": "numpy dot product over L2-normalised float32 vectors (gabarito ExactVectors)"},
            parameters=parameters(ctx, names)),
        "methods": methods(ctx.args.rrf_k, ctx.args.depth),
        "measures": list(MEASURES),
        "collections": by_collection,
        "parity_summary": parity_summary,
        "rrf_python": inspect.getsource(fusion.rrf),
        "timings": {"wall_s": ctx.wall_s(), "embedding_cache": vec.report},
    }


if __name__ == "__main__":
    study_main(__file__, run, add_arguments)
